package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/importtable"
	"github.com/tranquil/automation/permissions"
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

// BenchmarkGraphCheck measures a cached check of a 50-module graph (the
// verdict is reused once every file's content hash matches) against a stat
// of the same files, and the uncached check, which runs deno info.
func BenchmarkGraphCheck(b *testing.B) {
	m, _ := benchManager(b, nil, 1)
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var imports strings.Builder
	for i := range 49 {
		body := fmt.Sprintf("export const v%d = %d;\n", i, i) + strings.Repeat("// filler line for a module of about a kilobyte\n", 20)
		if err := os.MkdirAll(filepath.Join(root, "lib"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "lib", fmt.Sprintf("m%d.ts", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&imports, "import { v%d } from \"./lib/m%d.ts\";\n", i, i)
	}
	entry := filepath.Join(root, "main.ts")
	src := "// @permissions read=lib\n" + imports.String()
	if err := os.WriteFile(entry, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	h, err := permissions.Parse([]byte(src), entry)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sdk, err := m.prepare(ctx)
	if err != nil {
		b.Fatal(err)
	}
	files, _, err := moduleFiles(ctx, m, sdk, entry)
	if err != nil || len(files) != 50 {
		b.Fatalf("graph of %d files, want 50: %v", len(files), err)
	}
	// The peer is what the cache used to trust: a stat of every file,
	// interleaved with the check so both see the same machine.
	b.Run("cached", func(b *testing.B) {
		if err := m.graphs.check(ctx, m, sdk, h, entry); err != nil {
			b.Fatal(err)
		}
		var checkT, statT time.Duration
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if err := m.graphs.check(ctx, m, sdk, h, entry); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			for _, f := range files {
				if _, err := os.Stat(f); err != nil {
					b.Fatal(err)
				}
			}
			checkT, statT = checkT+t1.Sub(t0), statT+time.Since(t1)
		}
		b.ReportMetric(float64(checkT.Nanoseconds())/float64(b.N), "check-ns")
		b.ReportMetric(float64(statT.Nanoseconds())/float64(b.N), "stat-peer-ns")
		b.ReportMetric(float64(checkT)/float64(statT), "ratio")
	})
	b.Run("uncached", func(b *testing.B) {
		for range b.N {
			m.graphs.mu.Lock()
			clear(m.graphs.entries)
			m.graphs.mu.Unlock()
			if err := m.graphs.check(ctx, m, sdk, h, entry); err != nil {
				b.Fatal(err)
			}
		}
	})
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

// TestFileURLOfThisSystemsPaths: deno info gets the entry as a file: URL,
// which names the same file as the path, and filePath reads it back.
func TestFileURLOfThisSystemsPaths(t *testing.T) {
	cases := map[string]string{"/home/me/My Scripts/a#1.ts": "file:///home/me/My%20Scripts/a%231.ts"}
	if runtime.GOOS == "windows" {
		cases = map[string]string{
			`C:\Users\me\My Scripts\a#1.ts`: "file:///C:/Users/me/My%20Scripts/a%231.ts",
			`\\server\share\s.ts`:           "file://server/share/s.ts",
		}
	}
	for p, want := range cases {
		assert.Equal(t, want, fileURL(p))
		back, err := filePath(want)
		require.NoError(t, err)
		assert.Equal(t, p, back)
	}
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
