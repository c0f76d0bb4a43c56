package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// hostEnv is the built program, a data dir and a copy of the example
// scripts (runs write beside them).
type hostEnv struct {
	bin, data, scripts, site string
	env                      []string
}

func newHostEnv(t *testing.T) *hostEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	e := &hostEnv{bin: hostBinary(t, root), data: filepath.Join(root, "data"), scripts: filepath.Join(root, "scripts")}
	require.NoError(t, os.CopyFS(e.scripts, os.DirFS("../scripts")))
	e.site, err = filepath.Abs("../site")
	require.NoError(t, err)
	e.env = append(os.Environ(),
		"TRANQUIL_DENO="+testenv.Deno(t),
		"TRANQUIL_CHROMIUM="+testenv.Chromium(t),
		"DENO_DIR="+testenv.DenoCacheDir(t),
	)
	return e
}

type result struct {
	code           int
	stdout, stderr string
}

// host runs the program with stdin and returns its exit code and output.
func (e *hostEnv) host(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd, out, errOut := e.command(stdin, args...)
	err := cmd.Run()
	return e.result(t, err, out, errOut)
}

// syncBuffer is a buffer the test reads while the program writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (e *hostEnv) command(stdin string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	var out, errOut syncBuffer
	cmd := exec.Command(e.bin, append([]string{"--data", e.data}, args...)...)
	cmd.Env = e.env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 10 * time.Second
	return cmd, &out, &errOut
}

func (e *hostEnv) result(t *testing.T, err error, out, errOut *syncBuffer) result {
	t.Helper()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

func (e *hostEnv) script(name string) string { return filepath.Join(e.scripts, name) }

// runJSON runs a script with --approve --json over the demo site and
// decodes the record on stdout.
func (e *hostEnv) runJSON(t *testing.T, wantCode int, args ...string) (record, result) {
	t.Helper()
	res := e.host(t, "", append([]string{"run", "--approve", "--json", "--serve", e.site}, args...)...)
	require.Equal(t, wantCode, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	var rec record
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rec), "stdout holds only the record:\n%s", res.stdout)
	return rec, res
}

// hostRuns holds what subtests of TestHostProgram need done before them,
// each done once, by whichever subtest needs it first: so that every
// subtest also runs alone (-run 'TestHostProgram/history').
type hostRuns struct {
	e       *hostEnv
	reports string // where page-info.ts is mirrored
	mirror  bool   // the mirror of page-info.ts is set
	runs    map[string]ranScript
	ids     []string // every run so far, in order
}

type ranScript struct {
	rec record
	res result
}

// setMirror mirrors page-info.ts into r.reports, once.
func (r *hostRuns) setMirror(t *testing.T) {
	t.Helper()
	if r.mirror {
		return
	}
	res := r.e.host(t, "", "mirror", "set", r.e.script("page-info.ts"), r.reports)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "to "+r.reports)
	r.mirror = true
}

// ran runs the example script name with --approve --json, once, and
// returns that run; page-info.ts runs with its mirror set.
func (r *hostRuns) ran(t *testing.T, name string) (record, result) {
	t.Helper()
	if got, ok := r.runs[name]; ok {
		return got.rec, got.res
	}
	if name == "page-info.ts" {
		r.setMirror(t)
	}
	rec, res := r.e.runJSON(t, exitOK, r.e.script(name))
	r.runs[name] = ranScript{rec, res}
	r.ids = append(r.ids, rec.ID)
	return rec, res
}

func TestHostProgram(t *testing.T) {
	e := newHostEnv(t)
	// The mirror is declared before page-info first runs, so that its
	// run copies the file it writes.
	reports := filepath.Join(filepath.Dir(e.scripts), "reports")
	runs := &hostRuns{e: e, reports: reports, runs: map[string]ranScript{}}

	t.Run("mirror set, never synced", func(t *testing.T) {
		runs.setMirror(t)
		res := e.host(t, "", "mirror", "status")
		require.Equal(t, exitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "mirror of "+e.script("page-info.ts")+"\n  to:        "+reports+"\n  last sync: never synced\n")

		res = e.host(t, "", "mirror", "status", "--json", e.script("page-info.ts"))
		require.Equal(t, exitOK, res.code, res.stderr)
		var ms []mirrorOut
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &ms))
		require.Len(t, ms, 1)
		assert.Equal(t, "never", string(ms[0].Outcome))
		assert.Zero(t, ms[0].LastSync)

		// Inside the script's directory, the mirror would copy its own output.
		res = e.host(t, "", "mirror", "set", e.script("page-info.ts"), filepath.Join(e.scripts, "reports"))
		assert.Equal(t, exitRefused, res.code)
		assert.Contains(t, res.stderr, "mirror: destination refused: "+filepath.Join(e.scripts, "reports")+" is inside "+e.scripts)
		res = e.host(t, "", "mirror", "status", e.script("page-info.ts"))
		assert.Contains(t, res.stdout, "to:        "+reports, "the refused destination replaced nothing")

		// Not yet approved: its write= grants are not copied anywhere.
		res = e.host(t, "", "mirror", "sync", e.script("page-info.ts"))
		assert.Equal(t, exitRefused, res.code)
		assert.Contains(t, res.stderr, "not approved")
		assert.Equal(t, exitFailed, e.host(t, "", "mirror", "status", e.script("fill-signup.ts")).code, "no mirror applies")
	})

	t.Run("run page-info", func(t *testing.T) {
		rec, res := runs.ran(t, "page-info.ts")
		assert.Equal(t, "succeeded", string(rec.State))
		var got struct {
			Title                   string
			Links, Images, Headings int
		}
		require.NoError(t, json.Unmarshal(rec.Result, &got))
		assert.Equal(t, "Tranquil demo site", got.Title)
		assert.Equal(t, 4, got.Links)
		assert.Equal(t, 2, got.Images)
		assert.Equal(t, 3, got.Headings)
		data, err := os.ReadFile(e.script("page-info.txt"))
		require.NoError(t, err)
		assert.Equal(t, "Tranquil demo site\n\nLinks: 4  |  Images: 2  |  Headings: 3\n", string(data))
		assert.Contains(t, res.stderr, "Approved without asking (--approve).")
		assert.Contains(t, res.stderr, "can see and control your browser tabs", "the consent wording is shown")
		assert.Contains(t, res.stderr, "open: "+e.script("page-info.txt")+" (split down)")
		assert.Contains(t, res.stderr, "result: {", "output lines go to stderr with --json")
		assert.Regexp(t, `last sync: copied 1 at [0-9-]+ [0-9:]+ \(run `+rec.ID+`\)`, res.stderr, "the run says what its mirror copied")
		mirrored, err := os.ReadFile(filepath.Join(reports, "page-info.txt"))
		require.NoError(t, err)
		assert.Equal(t, string(data), string(mirrored))
	})

	t.Run("mirror status, sync and remove", func(t *testing.T) {
		pageInfo, _ := runs.ran(t, "page-info.ts")
		res := e.host(t, "", "mirror", "status", e.script("page-info.ts"))
		require.Equal(t, exitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "last sync: copied 1 at ")
		assert.Contains(t, res.stdout, "(run "+pageInfo.ID+")")

		res = e.host(t, "", "mirror", "sync", e.script("page-info.ts"))
		require.Equal(t, exitOK, res.code, res.stderr)
		assert.Regexp(t, `last sync: synced [0-9-]+ [0-9:]+, nothing to copy\n  unchanged: 1\n`, res.stdout)
		res = e.host(t, "", "mirror", "status", "--json")
		require.Equal(t, exitOK, res.code, res.stderr)
		var ms []mirrorOut
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &ms))
		require.Len(t, ms, 1)
		assert.Equal(t, "nothing", string(ms[0].Outcome))
		assert.Equal(t, "sync", ms[0].Trigger)
		assert.NotZero(t, ms[0].LastSync)

		res = e.host(t, "", "mirror", "remove", e.script("page-info.ts"))
		require.Equal(t, exitOK, res.code, res.stderr)
		res = e.host(t, "", "mirror", "status")
		assert.Equal(t, "no mirrors\n", res.stdout)
		_, err := os.Stat(filepath.Join(reports, "page-info.txt"))
		assert.NoError(t, err, "removing a mirror deletes nothing")
		assert.Equal(t, exitFailed, e.host(t, "", "mirror", "remove", e.script("page-info.ts")).code, "nothing left to remove")
	})

	t.Run("run fill-signup", func(t *testing.T) {
		rec, _ := runs.ran(t, "fill-signup.ts")
		var got struct {
			Rejected struct {
				Invalid   bool
				ErrorText string
			}
			Accepted struct{ Invalid bool }
			Invite   string
			LandedOn string
			Greeting string
			Plan     string
		}
		require.NoError(t, json.Unmarshal(rec.Result, &got), "%s", rec.Result)
		assert.True(t, got.Rejected.Invalid)
		assert.Equal(t, "Enter an email address like ada@example.com.", got.Rejected.ErrorText)
		assert.False(t, got.Accepted.Invalid)
		assert.Equal(t, "ABCD-1234", got.Invite, "trusted typing is kept by the field that refuses script-set values")
		assert.Equal(t, "/welcome.html", got.LandedOn)
		assert.Equal(t, "Welcome, Ada Lovelace", got.Greeting)
		assert.Equal(t, "team", got.Plan)
		require.Len(t, rec.Actions, 10, "the goto, eight form actions and the navigation the form made")
		assert.Equal(t, "goto", rec.Actions[0].Method)
		var navigated []string
		for _, a := range rec.Actions {
			if a.Method == "navigated" {
				navigated = append(navigated, a.Target)
			}
		}
		require.Len(t, navigated, 1)
		assert.Regexp(t, `^http://127\.0\.0\.1:\d+/welcome\.html\?… \(\d+ bytes of query\)$`, navigated[0], "the query's text stays out of the log")
		for _, a := range rec.Actions {
			assert.Equal(t, "127.0.0.1", a.Site)
			assert.Equal(t, "ok", a.Outcome)
		}
		raw, _ := json.Marshal(rec.Actions)
		assert.NotContains(t, string(raw), "analytical-engine", "the action log never holds a typed value")
	})

	t.Run("run titles-fanout", func(t *testing.T) {
		rec, _ := runs.ran(t, "titles-fanout.ts")
		var rows []struct{ URL, Title string }
		require.NoError(t, json.Unmarshal(rec.Result, &rows))
		require.Len(t, rows, 4)
		assert.Equal(t, "Sign up", rows[0].Title)
		assert.Equal(t, "/articles/consent.html", rows[3].URL)
		assert.Equal(t, "Asking before acting", rows[3].Title)
	})

	t.Run("run selection-demo, whole and selected", func(t *testing.T) {
		rec, res := e.runJSON(t, exitOK, e.script("selection-demo.ts"))
		assert.Contains(t, res.stderr, "active tab: Tranquil demo site")
		assert.JSONEq(t, `{"tabs":["Tranquil demo site"]}`, string(rec.Result))
		rec, res = e.runJSON(t, exitOK, "--lines", "15-21", e.script("selection-demo.ts"))
		assert.NotContains(t, res.stderr, "active tab:", "only the selected block ran")
		assert.Contains(t, res.stderr, "1 tab(s) open: Tranquil demo site")
		assert.JSONEq(t, `{"tabs":["Tranquil demo site"]}`, string(rec.Result))
		_, err := os.Stat(filepath.Join(e.scripts, ".runs"))
		assert.True(t, os.IsNotExist(err), "the selection file is gone")
	})

	t.Run("Ctrl-C cancels watch-pane", func(t *testing.T) {
		cmd, out, errOut := e.command("", "run", "--approve", "--json", "--serve", e.site, "--click", "Page title", e.script("watch-pane.ts"))
		require.NoError(t, cmd.Start())
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(errOut.String(), "returned Tranquil demo site") {
			require.True(t, time.Now().Before(deadline), "the pane control was never clicked:\n%s", errOut.String())
			time.Sleep(50 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		res := e.result(t, cmd.Wait(), out, errOut)
		require.Equal(t, exitCancelled, res.code, res.stderr)
		var rec record
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &rec))
		assert.Equal(t, "cancelled", string(rec.State))
		assert.Equal(t, "interrupted (Ctrl-C)", rec.Reason)
		assert.Contains(t, rec.Output, "active tab: Tranquil demo site")
		assert.Contains(t, rec.Output, "stopped after 1 click(s): interrupted (Ctrl-C)", "the script saw the cancel through context.signal")
	})

	bad := e.script("bad-header.ts")
	require.NoError(t, os.WriteFile(bad, []byte("// @permissions browser\n// @timeout 5 minutes\nconsole.log(1);\n"), 0o644))

	t.Run("a hostile script's text is bounded", func(t *testing.T) {
		// Everything it prints of a script's comes through the runner's
		// bounded paths: 20 MiB handed to log, notify and a pane control,
		// and a flood of log lines, print as a few hundred KiB.
		p := filepath.Join(e.scripts, "hostile.ts")
		require.NoError(t, os.WriteFile(p, []byte(`// @permissions none
import { context, paneControls, ui } from "tranquil/automation";
const big = "x".repeat(20 << 20);
context.log(big);
await ui.notify(big);
for (let i = 0; i < 5000; i++) context.log("flood " + i);
const clicked = Promise.withResolvers<void>();
await paneControls.register("big", () => {
  // The run ends a while after the click: long enough for the host to
  // take the 20 MiB reply and refuse it on a loaded machine, as the run
  // ending first would end the call with the run instead.
  setTimeout(clicked.resolve, 5000);
  return big;
});
await clicked.promise;
`), 0o644))
		res := e.host(t, "", "run", "--approve", "--click", "big", p)
		require.Equal(t, exitOK, res.code, "stderr:\n%s", res.stderr[:min(len(res.stderr), 4096)])
		t.Logf("printed %d KiB", (len(res.stdout)+len(res.stderr))>>10)
		assert.Less(t, len(res.stdout)+len(res.stderr), 2<<20)
		assert.Contains(t, res.stdout, "log: xxx")
		assert.Contains(t, res.stdout, " bytes cut]")
		assert.Contains(t, res.stdout, "notify [info]: xxx")
		assert.Contains(t, res.stderr, "context.log calls dropped")
		assert.Contains(t, res.stderr, `"big" failed: runner: limit_exceeded`)
	})

	t.Run("plan", func(t *testing.T) {
		runs.ran(t, "fill-signup.ts") // approved by its run
		res := e.host(t, "", "plan", e.script("fill-signup.ts"))
		require.Equal(t, exitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "grants:       browser forms sites=127.0.0.1 sites=localhost")
		assert.Contains(t, res.stdout, "--allow-net=127.0.0.1:<bridge-port>")
		assert.NotContains(t, res.stdout, "devtools", "the piped browser has no DevTools port to deny")
		assert.Contains(t, res.stdout, "approval:     approved ")
		assert.Contains(t, res.stdout, "[high risk] can fill in and submit forms")

		res = e.host(t, "", "plan", bad)
		assert.Equal(t, exitRefused, res.code)
		assert.Regexp(t, `^refused: `+regexp.QuoteMeta(bad)+`:2:\d+: `, res.stdout)

		res = e.host(t, "", "plan", bad, "--json")
		assert.Equal(t, exitRefused, res.code)
		var p planOut
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &p))
		assert.True(t, p.Refused)
		assert.Equal(t, 2, p.Line)
		assert.Positive(t, p.Column)

		// A static import the header does not declare is refused before
		// anything runs; declaring it makes the plan pass.
		require.NoError(t, os.WriteFile(e.script("lib.ts"), []byte("export const x = 1;\n"), 0o644))
		imp := e.script("imp.ts")
		require.NoError(t, os.WriteFile(imp, []byte("// @permissions none\nimport { x } from \"./lib.ts\";\nconsole.log(x);\n"), 0o644))
		res = e.host(t, "", "plan", imp)
		assert.Equal(t, exitRefused, res.code, res.stdout+res.stderr)
		assert.Contains(t, res.stdout, "refused: "+imp+": ")
		assert.Contains(t, res.stdout, "imports a file it did not declare: "+e.script("lib.ts"))
		res = e.host(t, "", "plan", "--json", imp)
		assert.Equal(t, exitRefused, res.code)
		p = planOut{}
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &p))
		assert.True(t, p.Refused)
		assert.Contains(t, p.Reason, e.script("lib.ts"))
		assert.Zero(t, p.Line, "not a header error")
		require.NoError(t, os.WriteFile(imp, []byte("// @permissions read=lib.ts\nimport { x } from \"./lib.ts\";\nconsole.log(x);\n"), 0o644))
		res = e.host(t, "", "plan", imp)
		assert.Equal(t, exitOK, res.code, res.stdout+res.stderr)
		assert.Contains(t, res.stdout, "module graph: every local file it loads")

		// A refused script does not run either, and says why.
		rec, _ := e.runJSON(t, exitRefused, bad)
		assert.Equal(t, "refused", string(rec.State))
		assert.Contains(t, rec.Reason, "line 2")
		runs.ids = append(runs.ids, rec.ID)
	})

	t.Run("consent on the terminal", func(t *testing.T) {
		src := e.script("ask.ts")
		require.NoError(t, os.WriteFile(src, []byte("// @permissions clipboard\nconsole.log('ran');\n"), 0o644))
		res := e.host(t, "n\n", "run", src)
		assert.Equal(t, exitRefused, res.code)
		assert.Contains(t, res.stderr, "can read and replace what you copy")
		assert.Contains(t, res.stderr, "Allow this script to run with these permissions? [y/N]")
		assert.NotContains(t, res.stdout, "ran")

		res = e.host(t, "y\n", "run", src)
		assert.Equal(t, exitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "ran")

		// A changed header asks again, with the diff.
		require.NoError(t, os.WriteFile(src, []byte("// @permissions clipboard browser\nconsole.log('ran');\n"), 0o644))
		res = e.host(t, "", "run", src)
		assert.Equal(t, exitRefused, res.code, "no answer is no approval")
		assert.Contains(t, res.stderr, "Its permissions changed since you approved them.")
		assert.Contains(t, res.stderr, "  + [high risk] can see and control your browser tabs")
	})

	t.Run("history and show", func(t *testing.T) {
		pageInfo, _ := runs.ran(t, "page-info.ts")
		signup, _ := runs.ran(t, "fill-signup.ts")
		res := e.host(t, "", "history", "--json", "-n", "50")
		require.Equal(t, exitOK, res.code, res.stderr)
		var recs []record
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &recs))
		have := map[string]string{}
		for _, r := range recs {
			have[r.ID] = string(r.State)
		}
		for _, id := range runs.ids {
			assert.Contains(t, have, id)
		}
		res = e.host(t, "", "history", "-n", "2")
		require.Equal(t, exitOK, res.code)
		assert.Len(t, strings.Split(strings.TrimSpace(res.stdout), "\n"), 3, "a heading and two runs")

		res = e.host(t, "", "show", signup.ID[:8])
		require.Equal(t, exitOK, res.code, res.stderr)
		assert.Contains(t, res.stdout, "signed up; now on /welcome.html")
		assert.Contains(t, res.stdout, "result: {")
		res = e.host(t, "", "show", "--json", pageInfo.ID)
		require.Equal(t, exitOK, res.code)
		var rec record
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &rec))
		assert.Equal(t, pageInfo.ID, rec.ID)
		assert.Equal(t, exitFailed, e.host(t, "", "show", "no-such-run").code)
	})

	t.Run("approvals and revoke", func(t *testing.T) {
		runs.ran(t, "page-info.ts") // approved by its run
		res := e.host(t, "", "approvals")
		require.Equal(t, exitOK, res.code)
		assert.Contains(t, res.stdout, e.script("page-info.ts"))
		res = e.host(t, "", "revoke", e.script("page-info.ts"))
		require.Equal(t, exitOK, res.code, res.stderr)
		res = e.host(t, "", "approvals", "--json")
		require.Equal(t, exitOK, res.code)
		assert.NotContains(t, res.stdout, e.script("page-info.ts"))
		res = e.host(t, "", "plan", e.script("page-info.ts"))
		assert.Contains(t, res.stdout, "not approved; the first run asks")
		assert.Equal(t, exitFailed, e.host(t, "", "revoke", e.script("page-info.ts")).code, "nothing left to revoke")
	})

	t.Run("doctor", func(t *testing.T) {
		runs.ran(t, "titles-fanout.ts") // a run fills the cache
		res := e.host(t, "", "doctor", "--json")
		require.Equal(t, exitOK, res.code, res.stdout+res.stderr)
		var d doctorOut
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
		assert.Contains(t, d.DenoVersion, "deno 2.")
		assert.Contains(t, strings.ToLower(d.ChromiumVersion), "chrom")
		assert.True(t, d.CacheWarm, "runs have filled the cache")
		assert.Len(t, d.SDKHash, 16)
		assert.Equal(t, e.data, d.DataDir)
	})

	// A broken installation is the host's failure, not the script's
	// refusal: exit 1, with the fix in the message.
	t.Run("a deno that cannot run", func(t *testing.T) {
		dir := t.TempDir()
		plain := filepath.Join(dir, "deno-plain")
		require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
		res := e.host(t, "", "run", "--approve", "--deno", plain, e.script("page-info.ts"))
		assert.Equal(t, exitFailed, res.code, res.stdout+res.stderr)
		assert.Contains(t, res.stderr, plain+" is not executable")
		assert.Contains(t, res.stderr, "chmod +x")

		garbage := filepath.Join(dir, "deno-garbage")
		require.NoError(t, os.WriteFile(garbage, []byte("not a program\n"), 0o755))
		rec, res := e.runJSON(t, exitFailed, "--deno", garbage, e.script("page-info.ts"))
		assert.Equal(t, "failed", string(rec.State))
		assert.Contains(t, rec.Reason, "point DenoPath at a working deno")
		assert.Contains(t, res.stderr, "point DenoPath at a working deno", "the host was told")
	})

	t.Run("usage errors", func(t *testing.T) {
		assert.Equal(t, exitUsage, e.host(t, "", "run").code)
		assert.Equal(t, exitUsage, e.host(t, "", "frobnicate").code)
		assert.Equal(t, exitUsage, e.host(t, "", "mirror").code)
		assert.Equal(t, exitUsage, e.host(t, "", "mirror", "frobnicate").code)
		assert.Equal(t, exitUsage, e.host(t, "", "mirror", "set", e.script("page-info.ts")).code)
		assert.Equal(t, exitUsage, e.host(t, "", "run", "--lines", "9-3", e.script("page-info.ts")).code)
		assert.Equal(t, exitUsage, e.host(t, "", "run", "--serve", e.site, "--url", "http://127.0.0.1:1/", e.script("page-info.ts")).code)
	})
}

// TestScriptsTypeCheck checks every example script against the SDK's types
// with the SDK's own deno.json, as an editor would.
func TestScriptsTypeCheck(t *testing.T) {
	sdk, err := runner.MaterializeSDK(t.TempDir())
	require.NoError(t, err)
	scripts, err := filepath.Glob("../scripts/*.ts")
	require.NoError(t, err)
	require.Len(t, scripts, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Deno(t), append([]string{"check", "--no-lock", "--config=" + sdk.Config}, scripts...)...)
	cmd.Env = []string{"DENO_DIR=" + testenv.DenoCacheDir(t), "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1", "HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, s := range scripts {
		src, err := os.ReadFile(s)
		require.NoError(t, err)
		first, _, _ := strings.Cut(string(src), "\n")
		guide, ok := strings.CutPrefix(first, "// Tranquil automation. How to write one: ")
		require.True(t, ok, "%s starts with %q", s, first)
		if !filepath.IsAbs(guide) {
			guide = filepath.Join(filepath.Dir(s), guide)
		}
		assert.FileExists(t, guide, "the first line of %s names the guide's real path", s)
	}
}
