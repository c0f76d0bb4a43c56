package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/importtable"
)

// TestGraphCacheSeesASwapThatKeepsSizeAndMtime is the attack a stat-keyed
// cache missed: a script with write=lib swaps a module of another script's
// graph for one of the same size that text-imports an undeclared file, and
// pins the module's mtime back. A long-lived manager must check the graph
// again and refuse the run.
func TestGraphCacheSeesASwapThatKeepsSizeAndMtime(t *testing.T) {
	e := newMgr(t, nil)
	e.script(t, "secret.txt", "the secret is 42")
	const evil = `import s from "../secret.txt" with { type: "text" }; export const x = s;`
	benign := "export const x = 1;"
	benign += "//" + strings.Repeat(" ", len(evil)-len(benign)-2)
	require.Len(t, benign, len(evil))
	mod := e.script(t, "lib/mod.ts", benign)
	// Whole seconds, as on a file system with one-second timestamps, so the
	// script can set the time back exactly through Deno.utimeSync.
	round := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(mod, round, round))

	victim := e.script(t, "victim.ts", "// @permissions read=lib\nimport { x } from \"./lib/mod.ts\";\nconsole.log(\"x is\", x);\n")
	_, entry := e.run(t, Request{Script: victim})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	require.Contains(t, entry.Output, "x is 1")

	attacker := e.script(t, "attacker.ts", fmt.Sprintf(`// @permissions read=lib write=lib
const p = %q;
const st = Deno.statSync(p);
Deno.writeTextFileSync(p, %q);
Deno.utimeSync(p, st.atime!, st.mtime!);
console.log("swapped");
`, mod, evil))
	_, entry = e.run(t, Request{Script: attacker})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	fi, err := os.Stat(mod)
	require.NoError(t, err)
	require.Equal(t, round, fi.ModTime(), "the attacker pinned the mtime")
	require.EqualValues(t, len(benign), fi.Size(), "and kept the size")

	_, entry = e.run(t, Request{Script: victim})
	assert.Equal(t, history.StateRefused, entry.State, entry.Reason+entry.Output)
	assert.Contains(t, entry.Reason, filepath.Join(e.dir, "secret.txt"))
	assert.NotContains(t, entry.Output, "the secret is 42")
}

// Plan refuses what the run could not load, whatever the scheme, with
// the way out in the message, rather than approving a run that would fail
// with what looks like a network error: npm:left-pad under
// "@permissions none" is the case that used to pass.
func TestPlanRefusesImportsTheRunCannotLoad(t *testing.T) {
	t.Parallel() // see parallel_test.go
	reg := serveJSR(t, stdStandIns(t))
	for _, registry := range []bool{false, true} {
		e := newMgr(t, nil)
		if registry {
			e = newStdMgr(t, reg, nil)
		}
		for _, c := range []struct {
			src, want string
			std       bool // with a registry, the way out names the @std short names
		}{
			{`import leftPad from "npm:left-pad@1";`, "npm:left-pad@1 cannot be loaded: a run that may import no remote code gets npm: packages only from deno's cache", true},
			{`const m = await import("npm:left-pad@1");`, "copy the module next to the script", true},
			{`import "left-pad";`, `"left-pad" cannot be loaded: it is not a name this app maps`, true},
			{`await import("blob:http://x.invalid/1");`, "a blob: URL exists only inside the run that made it", false},
			{`import "ftp://x.invalid/y.js";`, "deno loads no ftp: modules", false},
			{`import "https://esm.sh/x@1";`, "since this app gives runs no remote code", true},
		} {
			p := e.script(t, "s.ts", "// @permissions none\n"+c.src+"\n")
			plan, err := e.m.Plan(context.Background(), Request{Script: p})
			require.NoError(t, err)
			require.ErrorIs(t, plan.Refused, ErrRemoteImport, c.src)
			assert.Contains(t, plan.Refused.Error(), c.want, c.src)
			if registry && c.std {
				assert.Contains(t, plan.Refused.Error(), "@std/fmt", "the message names the @std short names: %s", c.src)
			}
		}
		if registry {
			p := e.script(t, "range.ts", "// @permissions none\nimport \"jsr:@std/fmt@^1/colors\";\n")
			plan, err := e.m.Plan(context.Background(), Request{Script: p})
			require.NoError(t, err)
			require.ErrorIs(t, plan.Refused, ErrRemoteImport)
			assert.Contains(t, plan.Refused.Error(), "this app ships @std/fmt "+pinOf(t, "@std/fmt")+` only; import it by its short name ("@std/fmt"`)
		}
	}
}

// TestImportTableReadsAWindowsPathAsAPath: an import written as a Windows
// path is a file the script meant, not a module of scheme c:; deno cannot
// load it (it reads the drive as a scheme), and the refusal says how to
// import the file instead.
func TestImportTableReadsAWindowsPathAsAPath(t *testing.T) {
	for _, spec := range []string{`C:\Users\me\lib.ts`, "d:/lib/x.ts"} {
		why, probe := importtable.Table{Hosts: true}.Refusal(spec)
		assert.Contains(t, why, "Windows path", spec)
		assert.Contains(t, why, `a relative path ("./lib.ts") or a file: URL`, spec)
		assert.False(t, probe)
	}
	why, _ := importtable.Table{}.Refusal("ftp://x.example/y.js")
	assert.Contains(t, why, "deno loads no ftp: modules", "a scheme is still a scheme")
}

// An @std import in an app that names no registry is refused naming the
// import as the author wrote it, its line, and what the host must set; an
// import the map does not change is named with its line alone.
func TestStdRefusalNamesTheImportAsWrittenAndWhatTheHostSets(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "report.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\nimport { parse } from \"@std/csv\";\nawait context.result(parse(\"a,b\"));\n")
	plan, err := e.m.Plan(context.Background(), Request{Script: p})
	require.NoError(t, err)
	require.ErrorIs(t, plan.Refused, ErrRemoteImport)
	msg := plan.Refused.Error()
	t.Log(msg)
	assert.Contains(t, msg, `import "@std/csv", line 3 of report.ts: jsr:@std/csv@`+pinOf(t, "@std/csv")+` cannot be loaded: this app names no JSR registry, so its scripts have no @std packages; the app's host sets one (runner.Config.JSR; the example host's --jsr URL)`)

	p = e.script(t, "pad.ts", "// @permissions none\n\nimport leftPad from \"npm:left-pad@1\";\n")
	plan, err = e.m.Plan(context.Background(), Request{Script: p})
	require.NoError(t, err)
	assert.Contains(t, plan.Refused.Error(), "line 3 of pad.ts: npm:left-pad@1 cannot be loaded")
	assert.NotContains(t, plan.Refused.Error(), `import "npm:left-pad@1"`, "written as it resolves: not named twice")
}

// denoStartErr calls deno unusable only for a failure to start it: a
// context that ended first says nothing of deno, and a cause with nothing
// wrapped is said as it is (not "<nil>").
func TestDenoStartErr(t *testing.T) {
	m := &Manager{deno: "/opt/deno"}
	assert.NoError(t, m.denoStartErr(nil))
	assert.NoError(t, m.denoStartErr(context.DeadlineExceeded))
	assert.NoError(t, m.denoStartErr(fmt.Errorf("deno check: %w", context.Canceled)))
	err := m.denoStartErr(&exec.Error{Name: "/opt/deno", Err: exec.ErrNotFound})
	require.ErrorIs(t, err, ErrDenoUnusable)
	assert.Contains(t, err.Error(), "/opt/deno: executable file not found")
	err = m.denoStartErr(errors.New("no such thing"))
	require.ErrorIs(t, err, ErrDenoUnusable)
	assert.Contains(t, err.Error(), ": no such thing;")
	assert.NotContains(t, err.Error(), "<nil>")
}
