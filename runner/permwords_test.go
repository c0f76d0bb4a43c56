package runner

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// Deno's refusal of an ungranted access reaches the author as the
// @permissions key that grants it (a path inside the script's folder
// relative to it, as the header takes it), with deno's own words after;
// an access no key grants says so.
func TestPermissionErrorsNameTheKeyToAdd(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newMgr(t, nil)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	tool := filepath.Join(e.dir, "tool")
	for name, c := range map[string]struct{ code, want string }{
		"write":                   {`await Deno.writeTextFile("out/report.txt", "x");`, `write access to out/report.txt is not granted: add write=out/report.txt to the script's // @permissions line (deno: Requires write access to "`},
		"read":                    {"await Deno.readTextFile(" + strconv.Quote(secret) + ");", "read access to " + secret + " is not granted: add read=" + secret + " to the script's // @permissions line (deno: Requires read access to "},
		"write inside the folder": {"await Deno.writeTextFile(" + strconv.Quote(filepath.Join(e.dir, "out", "a.txt")) + `, "x");`, `write access to out/a.txt is not granted: add write=out/a.txt to the script's // @permissions line (deno:`},
		"env":                     {`Deno.env.get("SOME_TOKEN");`, `env access to SOME_TOKEN is not granted: add env=SOME_TOKEN to the script's // @permissions line (deno:`},
		// Refused before anything is sent.
		"net":    {`await fetch("http://127.0.0.1:8/");`, `net access to 127.0.0.1:8 is not granted: add net=127.0.0.1:8 to the script's // @permissions line (deno:`},
		"run":    {"new Deno.Command(" + strconv.Quote(tool) + ").outputSync();", "run access to " + tool + " is not granted: add run=" + tool + " to the script's // @permissions line (deno:"},
		"no key": {`Deno.hostname();`, `sys access to hostname is not granted, and no @permissions key grants it (deno:`},
	} {
		t.Run(name, func(t *testing.T) {
			entry := e.runScript(t, "needs.ts", "// @permissions none\n"+c.code+"\n")
			require.Equal(t, history.StateFailed, entry.State, entry.Output)
			assert.Contains(t, entry.FirstError, "error: NotCapable: "+c.want)
		})
	}
}

// The guide shows the words a run-level timeout, a Deno refusal and an
// @std refusal reach the author in, as the code words them (the phrases
// TestPermissionErrorsNameTheKeyToAdd,
// TestStdRefusalNamesTheImportAsWrittenAndWhatTheHostSets and
// TestTimeoutNamesThePendingCallAndLine hold the code to).
func TestGuideShowsTheRunsWordings(t *testing.T) {
	data, err := sdkFS.ReadFile("sdk/writing-automations.md")
	require.NoError(t, err)
	guide := string(data)
	for _, phrase := range []string{
		"tranquil: cancelled: timed out after 1s, while waiting for clipboard.read (",
		`error: NotCapable: write access to out/report.txt is not granted: add write=out/report.txt to the script's // @permissions line (deno: Requires write access to "`,
		`import "@std/csv", line 3 of report.ts: jsr:@std/csv@` + pinOf(t, "@std/csv") + ` cannot be loaded: this app names no JSR registry, so its scripts have no @std packages; the app's host sets one (runner.Config.JSR; the example host's --jsr URL)`,
		"without one there is no `@std`",
	} {
		assert.Contains(t, guide, phrase)
	}
}

// stuckReader is a clipboard whose Read waits for its context: a host
// call that lasts until it is called off.
type stuckReader struct{}

func (stuckReader) Read(ctx context.Context, _ RunInfo) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func (stuckReader) Write(context.Context, RunInfo, string) error { return nil }

// A run past its @timeout says what its script was waiting for, and where:
// the call pending and the script's line, after the timeout itself.
func TestTimeoutNamesThePendingCallAndLine(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.Host.Clipboard = stuckReader{} })
	entry := e.runScript(t, "slow.ts", `// @permissions clipboard
// @timeout 1s
import { clipboard } from "tranquil/automation";
console.log("reading");
const text = await clipboard.read();
console.log(text);
`)
	require.Equal(t, history.StateTimedOut, entry.State, "%s\n%s", entry.Reason, entry.Output)
	assert.Contains(t, entry.Reason, "timed out after 1s")
	assert.Contains(t, entry.FirstError, "timed out after 1s, while waiting for clipboard.read (")
	assert.Contains(t, entry.FirstError, "slow.ts:5:", "the line of the pending call")
	t.Logf("first error: %s", entry.FirstError)
}
