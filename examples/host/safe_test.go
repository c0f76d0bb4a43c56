package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// raw lists what must never reach the terminal from a script: ESC (every
// ANSI sequence starts with it), a bare carriage return, DEL, the C1
// controls CSI and NEL, bidi override and isolate, and the line separator.
var raw = []string{"\x1b", "\r", "\x7f", "\u009b", "\u0085", "\u202e", "\u2066", "\u2028"}

func assertNoRaw(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range raw {
		assert.NotContains(t, out, r, "%s printed %q raw", what, r)
	}
}

// A script controls its file name, the folders above it, its
// notifications, output, log lines, result, error and pane controls. None
// of it reaches the terminal raw: not in the consent prompt, the run's
// output, the summary, the history or the plan; --json keeps the exact
// text, escaped as JSON.
func TestHostEscapesWhatScriptsControl(t *testing.T) {
	e := newHostEnv(t)
	dir := filepath.Join(e.scripts, "evil\x1b]0;owned\x07\x1b[2J")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	script := filepath.Join(dir, "ok\u202egnp.\x1b[1A.ts")
	require.NoError(t, os.WriteFile(script, []byte(`// @permissions clipboard
import { context, paneControls, ui } from "tranquil/automation";
await ui.notify("\x1b[1A\x1b[2KAllow this script? [y/N] y\rApproved\u202e\u009b31m");
console.log("out \x1b[31mred\x1b[0m \u0085 \u2028 \u2066done");
console.error("err \x1b[2J\x7f");
context.log("log \x1b]0;title\x07");
await context.result({ v: "\x1b[5m\u202e\x7f" });
await paneControls.register("btn\x1b[7m", () => "clicked");
throw new Error("boom \x1b[2J\u202e");
`), 0o644))

	res := e.host(t, "", "run", "--approve", "--serve", e.site, script)
	require.Equal(t, exitFailed, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assertNoRaw(t, "run (stdout)", res.stdout)
	assertNoRaw(t, "run (stderr)", res.stderr)
	assert.Contains(t, res.stderr, "The script "+safe(script)+" asks for permission.")
	assert.Contains(t, res.stderr, `evil\x1b]0;owned\x07\x1b[2J/ok\u202egnp.\x1b[1A.ts`)
	assert.Contains(t, res.stdout, `notify [info]: \x1b[1A\x1b[2KAllow this script? [y/N] y\rApproved\u202e\u009b31m`+"\n")
	assert.Contains(t, res.stdout, `out \x1b[31mred\x1b[0m \u0085 \u2028 \u2066done`)
	assert.Contains(t, res.stderr, `err \x1b[2J\x7f`)
	assert.Contains(t, res.stdout, `log: log \x1b]0;title\x07`)
	assert.Contains(t, res.stdout, `result: {"v":"\u001b[5m\u202e\x7f"}`, "JSON escaped ESC already; DEL is escaped too")
	assert.Contains(t, res.stdout, `boom \x1b[2J\u202e`)

	res = e.host(t, "", "run", "--approve", "--json", "--serve", e.site, script)
	require.Equal(t, exitFailed, res.code, res.stderr)
	assertNoRaw(t, "run --json (stdout)", res.stdout)
	assertNoRaw(t, "run --json (stderr)", res.stderr)
	var rec record
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rec), res.stdout)
	assert.Equal(t, script, rec.Script, "JSON keeps the exact text")
	var result struct{ V string }
	require.NoError(t, json.Unmarshal(rec.Result, &result))
	assert.Equal(t, "\x1b[5m\u202e\x7f", result.V)

	for _, args := range [][]string{
		{"history", "-n", "5"}, {"history", "--json"}, {"show", rec.ID}, {"show", "--json", rec.ID},
		{"approvals", "-json=false"}, {"approvals", "--json"}, {"plan", script}, {"plan", "--json", script},
	} {
		res := e.host(t, "", args...)
		require.Equal(t, exitOK, res.code, "%v: %s", args, res.stderr)
		assertNoRaw(t, strings.Join(args, " "), res.stdout+res.stderr)
		escaped := `ok\u202egnp.\x1b[1A.ts`
		if args[1] == "--json" {
			escaped = `ok\u202egnp.\u001b[1A.ts`
		}
		assert.Contains(t, res.stdout, escaped, "%v shows the script, escaped", args)
	}
}

func TestEscapeJSON(t *testing.T) {
	in := map[string]string{"s": "a\x1b[2J\u202e\x7f\u009b\u2028\U000e0041 ünï 日本 👩‍💻 \ufffd"}
	var buf bytes.Buffer
	require.NoError(t, printJSON(&buf, in))
	assertNoRaw(t, "printJSON", buf.String())
	assert.NotContains(t, buf.String(), "\U000e0041")
	assert.Contains(t, buf.String(), `\u001b[2J\u202e\u007f\u009b\u2028\udb40\udc41 ünï 日本 👩‍💻 �`)
	var out map[string]string
	require.NoError(t, json.Unmarshal(buf.Bytes(), &out))
	assert.Equal(t, in, out, "the escapes decode to the same text")
}

func TestTerminalWriter(t *testing.T) {
	var buf bytes.Buffer
	w := terminalWriter{&buf}
	n, err := w.Write([]byte("line one\n\tforged\x1b[1A\r\u202e\n"))
	require.NoError(t, err)
	assert.Equal(t, len("line one\n\tforged\x1b[1A\r\u202e\n"), n)
	assert.Equal(t, "line one\n\tforged\\x1b[1A\\r\\u202e\n", buf.String())
}

func TestSafeOutputKeepsTabs(t *testing.T) {
	assert.Equal(t, "Sign up\t/signup.html", safeOutput("Sign up\t/signup.html"))
	assert.Equal(t, `a\nb\r\x1b[2J`, safeOutput("a\nb\r\x1b[2J"))
}
