package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// hostBinEnv names a host program built beforehand, which the tests run
// instead of building one: `make test-windows` builds it for Windows,
// where the tests run under Wine without a Go toolchain.
const hostBinEnv = "TRANQUIL_HOST_BIN"

// hostBinary returns the host program to test: $TRANQUIL_HOST_BIN, or one
// built into dir.
func hostBinary(t *testing.T, dir string) string {
	t.Helper()
	if p := os.Getenv(hostBinEnv); p != "" {
		return p
	}
	bin := filepath.Join(dir, "host")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestCommandsWithoutABrowser runs the commands that start no browser, as
// on a computer where none is installed (the browser it is told of does
// not exist): the usage, plan for a script a run would accept, one whose
// import it would refuse and one with a bad header, doctor naming what is
// missing, approvals, revoke and history with nothing recorded, and a
// mirror set, shown and removed. `make test-windows` runs it on Windows.
func TestCommandsWithoutABrowser(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	scripts := filepath.Join(root, "scripts")
	require.NoError(t, os.MkdirAll(scripts, 0o755))
	e := &hostEnv{bin: hostBinary(t, root), data: filepath.Join(root, "data"), scripts: scripts}
	e.env = append(os.Environ(),
		"TRANQUIL_DENO="+testenv.Deno(t),
		"TRANQUIL_CHROMIUM="+filepath.Join(root, "no-browser"),
		"DENO_DIR="+testenv.DenoCacheDir(t),
	)
	write := func(name, src string) string {
		p := filepath.Join(scripts, name)
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		return p
	}
	write("lib.ts", "export const v = 1;\n")
	ok := write("ok.ts", "// @permissions read=lib.ts write=out\nimport { v } from \"./lib.ts\";\nconsole.log(v);\n")
	undeclared := write("undeclared.ts", "// @permissions none\nimport { v } from \"./lib.ts\";\nconsole.log(v);\n")
	bad := write("bad.ts", "// @permissions brwoser\n")

	r := e.host(t, "", "help")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "usage: host")
	assert.Equal(t, exitUsage, e.host(t, "", "frobnicate").code)

	r = e.host(t, "", "plan", ok)
	require.Equal(t, exitOK, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "script:       "+ok+"\n")
	assert.Contains(t, r.stdout, "--allow-read=")
	assert.Contains(t, r.stdout, filepath.Join(scripts, "lib.ts"), "the read= grant, resolved on this system")
	assert.Contains(t, r.stdout, "--allow-write="+filepath.Join(scripts, "out"))
	assert.Contains(t, r.stdout, "approval:     not approved; the first run asks")
	var plan struct {
		Refused bool
		Command []string
	}
	r = e.host(t, "", "plan", "--json", ok)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &plan), r.stdout)
	assert.False(t, plan.Refused)
	assert.Equal(t, ok, plan.Command[len(plan.Command)-1], "the entry is the script's own path")

	r = e.host(t, "", "plan", undeclared)
	assert.Equal(t, exitRefused, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "refused: ")
	assert.Contains(t, r.stdout, "add read="+filepath.Join(scripts, "lib.ts"))
	r = e.host(t, "", "plan", bad)
	assert.Equal(t, exitRefused, r.code)
	assert.Contains(t, r.stdout, bad+":1:17: unknown key")

	// No @std without a registry, and the refusal says how the host names
	// one; --jsr names it (here a closed loopback port, which the
	// manager then reports it cannot reach).
	std := write("std.ts", "// @permissions none\nimport { parse } from \"@std/csv\";\nconsole.log(parse(\"a\"));\n")
	r = e.host(t, "", "plan", std)
	assert.Equal(t, exitRefused, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `import "@std/csv", line 2 of std.ts:`)
	assert.Contains(t, r.stdout, "this app names no JSR registry, so its scripts have no @std packages; the app's host sets one (runner.Config.JSR; the example host's --jsr URL)")
	r = e.host(t, "", "plan", "--jsr", "http://127.0.0.1:1/", std)
	assert.NotEqual(t, exitOK, r.code, "%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "http://127.0.0.1:1/", "the registry --jsr names is the one asked")

	r = e.host(t, "", "doctor", "--json")
	var doc struct {
		Deno, DenoVersion string
		Problems          []string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "%s%s", r.stdout, r.stderr)
	assert.NotEmpty(t, doc.DenoVersion, "deno runs")
	require.Len(t, doc.Problems, 1, "%v", doc.Problems)
	assert.Contains(t, doc.Problems[0], "no-browser", "the missing browser is named")

	r = e.host(t, "", "approvals")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, exitFailed, e.host(t, "", "revoke", ok).code, "nothing to withdraw")
	r = e.host(t, "", "history", "--json")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "[]", strings.TrimSpace(r.stdout))

	dest := filepath.Join(root, "reports")
	r = e.host(t, "", "mirror", "set", ok, dest)
	require.Equal(t, exitOK, r.code, "%s%s", r.stdout, r.stderr)
	r = e.host(t, "", "mirror", "status", ok)
	assert.Contains(t, r.stdout, "to:        "+dest+"\n  last sync: never synced\n")
	r = e.host(t, "", "mirror", "set", ok, filepath.Join(scripts, "out", "copy"))
	assert.Equal(t, exitRefused, r.code, "a destination inside a write= grant")
	assert.Equal(t, exitOK, e.host(t, "", "mirror", "remove", ok).code)
	assert.Equal(t, exitFailed, e.host(t, "", "mirror", "status", ok).code, "no mirror applies")
}
