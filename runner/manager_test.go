package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc"
	"github.com/tranquil/automation/runner/internal/modgraph"
)

// fakeHost records what scripts asked the host to do.
type fakeHost struct {
	mu       sync.Mutex
	notes    []string
	clip     string
	project  string
	opened   []string
	notified chan string
}

func newFakeHost() *fakeHost {
	return &fakeHost{clip: "copied text", project: "/projects/demo", notified: make(chan string, 64)}
}

func (h *fakeHost) Notify(_ context.Context, run RunInfo, msg string, level Level) error {
	h.mu.Lock()
	h.notes = append(h.notes, string(level)+": "+msg)
	h.mu.Unlock()
	h.notified <- msg
	return nil
}

func (h *fakeHost) Open(_ context.Context, run RunInfo, path string, o OpenOptions) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opened = append(h.opened, path+"|"+o.Split)
	return nil
}

func (h *fakeHost) Read(context.Context, RunInfo) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clip, nil
}

func (h *fakeHost) Write(_ context.Context, _ RunInfo, text string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clip = text
	return nil
}

func (h *fakeHost) ProjectDir(context.Context, RunInfo) (string, error) { return h.project, nil }

// mgrEnv is a manager over a temporary data dir with an approving prompter.
type mgrEnv struct {
	m       *Manager
	host    *fakeHost
	dir     string // scripts live here
	data    string
	answer  consent.Answer
	prompts int
	mu      sync.Mutex
	events  []Event
}

func newMgr(t testing.TB, mod func(*Config)) *mgrEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	e := &mgrEnv{host: newFakeHost(), dir: filepath.Join(root, "scripts"), data: filepath.Join(root, "data"), answer: consent.Approve}
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	store, err := consent.OpenStore(filepath.Join(e.data, "consent.json"), consent.StoreOptions{})
	require.NoError(t, err)
	gate := consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.prompts++
		return e.answer, nil
	}))
	cfg := Config{
		DataDir:  e.data,
		CacheDir: testenv.DenoCacheDir(t),
		DenoPath: testenv.Deno(t),
		Host:     Host{UI: e.host, Clipboard: e.host, Workspace: e.host},
		Gate:     gate,
		OnEvent: func(ev Event) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, ev)
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	require.NoError(t, err)
	e.m = m
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, m.Prepare(ctx))
	waitCachesIdle(m) // the seed and spares are laid out, so nothing runs in the background
	return e
}

func (e *mgrEnv) script(t testing.TB, name, src string) string {
	t.Helper()
	p := filepath.Join(e.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

func (e *mgrEnv) run(t testing.TB, req Request) (*Run, history.Entry) {
	t.Helper()
	r, err := e.m.Start(context.Background(), req)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	return r, entry
}

func (e *mgrEnv) runScript(t *testing.T, name, src string) history.Entry {
	t.Helper()
	_, entry := e.run(t, Request{Script: e.script(t, name, src)})
	return entry
}

func TestRunSucceedsWithResult(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "ok.ts", `// @permissions clipboard
import { clipboard, context, ui } from "tranquil/automation";
const text = await clipboard.read();
await ui.notify("read " + text.length);
console.log("hello from the script");
await context.result({ text, n: 42 });
`)
	require.Equal(t, history.StateSucceeded, entry.State, "reason %q output:\n%s", entry.Reason, entry.Output)
	assert.JSONEq(t, `{"text":"copied text","n":42}`, string(entry.Result))
	assert.Contains(t, entry.Output, "hello from the script")
	require.NotNil(t, entry.ExitCode)
	assert.Equal(t, 0, *entry.ExitCode)
	assert.Equal(t, "clipboard", entry.Permissions)
	assert.False(t, entry.End.Before(entry.Start))
	assert.Contains(t, e.host.notes, "info: read 11")
	got, ok := e.m.History().Get(entry.ID)
	require.True(t, ok)
	assert.Equal(t, history.StateSucceeded, got.State)
}

func TestUncaughtErrorFailsAndNotifies(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "boom.ts", "// @permissions none\n\nthrow new Error(\"boom\");\n")
	require.Equal(t, history.StateFailed, entry.State, entry.Output)
	require.NotNil(t, entry.ExitCode)
	assert.Equal(t, 1, *entry.ExitCode)
	assert.Contains(t, entry.FirstError, "boom")
	assert.Contains(t, entry.FirstError, modgraph.FileURL(filepath.Join(e.dir, "boom.ts"))+":3:7", "the first stack line points at the script's file:line")
	select {
	case msg := <-e.host.notified:
		assert.Contains(t, msg, "boom")
		assert.Contains(t, msg, entry.ID)
	case <-time.After(5 * time.Second):
		t.Fatal("the host was not notified")
	}
}

// TestUncaughtErrorOutlivesATimersExit: a script an error ended waits a
// moment for its last call sites to reach the host, and its timers still
// run meanwhile; one that calls Deno.exit(0) then must not turn the
// failure into a success. deno dispatches a top-level error after the
// timers already due unless some I/O lands first, so each script spins
// until its timer is due, and it runs a few times, with a call pending
// and without.
func TestUncaughtErrorOutlivesATimersExit(t *testing.T) {
	e := newMgr(t, nil)
	for i, call := range []string{`context.log("a");`, "", "", "", ""} {
		entry := e.runScript(t, fmt.Sprintf("exit-after-%d.ts", i), `// @permissions none
import { context } from "tranquil/automation";
`+call+`
setTimeout(() => Deno.exit(0), 0);
const due = performance.now() + 20;
while (performance.now() < due) { /* the timer is due */ }
throw new Error("boom");
`)
		require.Equal(t, history.StateFailed, entry.State, entry.Output)
		require.NotNil(t, entry.ExitCode)
		assert.Equal(t, 1, *entry.ExitCode)
		assert.Contains(t, entry.FirstError, "boom")
	}
}

func TestRefusals(t *testing.T) {
	e := newMgr(t, nil)
	for name, tc := range map[string]struct {
		src    string
		answer consent.Answer
		reason string
	}{
		"missing header": {"console.log(1)\n", consent.Approve, "no @permissions header"},
		"bad header":     {"// @permissions brwoser\n", consent.Approve, `line 1, column 17: unknown key "brwoser", did you mean "browser"?`},
		"denied":         {"// @permissions clipboard\nconsole.log(1)\n", consent.Deny, "did not approve"},
	} {
		t.Run(name, func(t *testing.T) {
			e.mu.Lock()
			e.answer = tc.answer
			e.mu.Unlock()
			entry := e.runScript(t, strings.ReplaceAll(name, " ", "-")+".ts", tc.src)
			assert.Equal(t, history.StateRefused, entry.State)
			assert.Contains(t, entry.Reason, tc.reason)
			assert.Nil(t, entry.ExitCode, "no process was started")
		})
	}
}

func TestRefusesUndeclaredStaticImport(t *testing.T) {
	e := newMgr(t, nil)
	e.script(t, "secret.txt", "top secret")
	e.script(t, "lib.ts", "export const x = 1;\n")
	entry := e.runScript(t, "imp.ts", `// @permissions none
import secret from "./secret.txt" with { type: "text" };
console.log(secret);
`)
	assert.Equal(t, history.StateRefused, entry.State)
	assert.Contains(t, entry.Reason, filepath.Join(e.dir, "secret.txt"))
	assert.NotContains(t, entry.Output, "top secret")

	entry = e.runScript(t, "imp2.ts", `// @permissions read=lib.ts
import { x } from "./lib.ts";
console.log("x is", x);
`)
	assert.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	assert.Contains(t, entry.Output, "x is 1")
}

func TestCancelCooperative(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "coop.ts", `// @permissions none
import { context } from "tranquil/automation";
console.log("waiting");
await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
console.log("stopping because", context.signal.reason.message);
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "waiting")
	start := time.Now()
	r.Cancel("user pressed stop")
	entry, err := r.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, history.StateCancelled, entry.State)
	assert.Equal(t, "user pressed stop", entry.Reason)
	assert.Less(t, time.Since(start), DefaultCancelGrace, "a cooperative script stops within the grace period")
	assert.Contains(t, entry.Output, "stopping because user pressed stop")
}

func TestCancelUncooperative(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.CancelGrace, c.KillGrace = 300*time.Millisecond, 300*time.Millisecond })
	p := e.script(t, "stubborn.ts", `// @permissions none
Deno.addSignalListener("SIGTERM", () => console.log("ignoring SIGTERM"));
console.log("waiting");
await new Promise(() => {}); // ignores the protocol cancel too
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "waiting")
	start := time.Now()
	r.Cancel("stop")
	entry, err := r.Wait(context.Background())
	require.NoError(t, err)
	elapsed := time.Since(start)
	assert.Equal(t, history.StateCancelled, entry.State)
	if runtime.GOOS == "windows" {
		// No SIGTERM to send: after the grace the job is ended at once,
		// with TerminateJobObject's exit code.
		assert.Empty(t, entry.Signal)
		require.NotNil(t, entry.ExitCode)
		assert.Equal(t, 1, *entry.ExitCode)
		assert.GreaterOrEqual(t, elapsed, 300*time.Millisecond, "grace then kill")
	} else {
		assert.Equal(t, "killed", entry.Signal)
		assert.Contains(t, entry.Output, "ignoring SIGTERM")
		assert.GreaterOrEqual(t, elapsed, 600*time.Millisecond, "grace then SIGTERM then SIGKILL")
	}
	assert.Less(t, elapsed, 5*time.Second)
}

func TestTimeoutAndNoTimeout(t *testing.T) {
	e := newMgr(t, func(c *Config) {
		c.DefaultTimeout = 500 * time.Millisecond
		c.CancelGrace, c.KillGrace = 200*time.Millisecond, 200*time.Millisecond
	})
	// @timeout none outlives the default timeout and runs until
	// cancelled: it is still running when a run that started after it
	// times out after twice the default.
	p := e.script(t, "watch.ts", "// @permissions none\n// @timeout none\nconsole.log(\"watching\");\nawait new Promise(() => {});\n")
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "watching")

	entry := e.runScript(t, "slow.ts", "// @permissions none\n// @timeout 1s\nawait new Promise(() => {});\n")
	assert.Equal(t, history.StateTimedOut, entry.State)
	assert.Contains(t, entry.Reason, "timed out after 1s")
	select {
	case msg := <-e.host.notified:
		assert.Contains(t, msg, "timed out")
	case <-time.After(5 * time.Second):
		t.Fatal("no notification for the timeout")
	}

	assert.Equal(t, history.StateRunning, r.State())
	r.Cancel("done watching")
	entry, err = r.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, history.StateCancelled, entry.State)
}

func TestRunSelection(t *testing.T) {
	e := newMgr(t, nil)
	src := e.script(t, "tools/source.ts", "// @permissions clipboard\nimport { clipboard } from \"tranquil/automation\";\nconsole.log(\"whole file\");\n")
	r, entry := e.run(t, Request{Script: src, Selection: &Selection{Text: "import { clipboard, context } from \"tranquil/automation\";\nconsole.log(\"selected\", context.scriptDir, await clipboard.read());\n"}})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	assert.Contains(t, entry.Output, "selected "+filepath.Dir(src)+" copied text")
	assert.NotContains(t, entry.Output, "whole file")
	_, err := os.Stat(filepath.Join(filepath.Dir(src), ".runs", r.ID()+"--"+filepath.Base(src)))
	assert.True(t, os.IsNotExist(err), "the selection file is gone")
	_, err = os.Stat(filepath.Join(filepath.Dir(src), ".runs"))
	assert.True(t, os.IsNotExist(err), "and so is its folder")
}

func TestConfigPersistsAcrossRuns(t *testing.T) {
	e := newMgr(t, nil)
	src := `// @permissions none
import { config, context } from "tranquil/automation";
const n = ((await config.get("count")) ?? 0) + 1;
await config.set("count", n);
await context.result(n);
`
	assert.JSONEq(t, "1", string(e.runScript(t, "count.ts", src).Result))
	assert.JSONEq(t, "2", string(e.runScript(t, "count.ts", src).Result))
	assert.JSONEq(t, "1", string(e.runScript(t, "other.ts", src).Result), "state is per script")
}

func TestPaneControls(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "pane.ts", `// @permissions none
// @timeout none
import { context, paneControls } from "tranquil/automation";
let clicks = 0;
await paneControls.register("Refresh", () => { clicks++; console.log("clicked", clicks); return clicks; });
console.log("registered");
await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "registered")
	assert.Equal(t, []PaneControl{{RunID: r.ID(), Script: p, Name: "Refresh"}}, e.m.PaneControls())
	e.mu.Lock()
	var registered []string
	for _, ev := range e.events {
		if ev.Kind == EventPaneControls && ev.RunID == r.ID() {
			registered = append(registered, ev.Stream+" "+ev.Line)
		}
	}
	e.mu.Unlock()
	assert.Equal(t, []string{"register Refresh"}, registered, "hosts hear of new controls")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 1; i <= 2; i++ {
		got, err := e.m.InvokePaneControl(ctx, r.ID(), "Refresh")
		require.NoError(t, err)
		assert.EqualValues(t, i, got)
	}
	r.Cancel("closing")
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	assert.Contains(t, entry.Output, "clicked 2")
	assert.Empty(t, e.m.PaneControls(), "released at the end of the run")
	_, err = e.m.InvokePaneControl(ctx, r.ID(), "Refresh")
	assert.ErrorIs(t, err, ErrUnknownRun)
}

func TestRevocationKillsLiveRun(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "rev.ts", "// @permissions clipboard\n// @timeout none\nconsole.log(\"up\");\nawait new Promise(() => {});\n")
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "up")
	ok, err := e.m.Gate().Store().Revoke(context.Background(), p)
	require.NoError(t, err)
	require.True(t, ok)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, history.StateCancelled, entry.State)
	assert.Equal(t, "approval revoked", entry.Reason)
}

func TestConcurrentRunsAreIsolated(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.MaxConcurrent = 8 })
	var runs []*Run
	for i := range 8 {
		p := e.script(t, fmt.Sprintf("iso%d.ts", i), fmt.Sprintf(`// @permissions write=out%d.txt
import { context } from "tranquil/automation";
await Deno.writeTextFile("out%d.txt", context.runId);
let other = "refused";
try { await Deno.writeTextFile("out%d.txt", "intruder"); other = "written"; } catch (e) { other = e.name; }
await context.result({ run: context.runId, other });
`, i, i, (i+1)%8))
		r, err := e.m.Start(context.Background(), Request{Script: p})
		require.NoError(t, err)
		runs = append(runs, r)
	}
	for i, r := range runs {
		entry, err := r.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
		var res struct{ Run, Other string }
		require.NoError(t, json.Unmarshal(entry.Result, &res))
		assert.Equal(t, r.ID(), res.Run)
		assert.Equal(t, "NotCapable", res.Other)
		data, err := os.ReadFile(filepath.Join(e.dir, fmt.Sprintf("out%d.txt", i)))
		require.NoError(t, err)
		assert.Equal(t, r.ID(), string(data))
	}
}

func TestQueueBeyondMaxConcurrency(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.MaxConcurrent = 2 })
	var runs []*Run
	for i := range 5 {
		// Each run waits for the go file, so none ends while the queue
		// is filled however slowly deno starts, then lasts 300 ms longer
		// than the one before, so no two slots come free at once: two
		// runs handed slots together would report their start in either
		// order, FIFO or not.
		p := e.script(t, fmt.Sprintf("q%d.ts", i), fmt.Sprintf(`// @permissions read=go
for (;;) {
  try { Deno.statSync("go"); break; } catch { await new Promise((r) => setTimeout(r, 20)); }
}
await new Promise((r) => setTimeout(r, %d));
`, 300*(i+1)))
		r, err := e.m.Start(context.Background(), Request{Script: p})
		require.NoError(t, err)
		runs = append(runs, r)
		// Each run takes a slot or joins the queue before the next is
		// started, so the order is known.
		if i < 2 {
			require.Eventually(t, func() bool { s := r.State(); return s == history.StateStarting || s == history.StateRunning }, 10*time.Second, time.Millisecond)
		} else {
			require.Eventually(t, func() bool { return e.m.runs.queue.queued() == i-1 }, 10*time.Second, time.Millisecond)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "go"), nil, 0o644))
	for _, r := range runs {
		entry, err := r.Wait(context.Background())
		require.NoError(t, err)
		assert.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	}
	// Replay the state events: never more than two running at once, and
	// runs started in the order they were queued.
	e.mu.Lock()
	defer e.mu.Unlock()
	running, maxRunning := 0, 0
	var order []string
	for _, ev := range e.events {
		if ev.Kind != EventState {
			continue
		}
		switch ev.State {
		case history.StateStarting:
			running++
			maxRunning = max(maxRunning, running)
			order = append(order, ev.RunID)
		case history.StateSucceeded:
			running--
		}
	}
	assert.Equal(t, 2, maxRunning)
	var want []string
	for _, r := range runs {
		want = append(want, r.ID())
	}
	assert.Equal(t, want, order, "FIFO")
}

func TestMoreThanTheBridgeDefaultRunAtOnce(t *testing.T) {
	n := rpc.DefaultMaxSessions + 8
	e := newMgr(t, func(c *Config) { c.MaxConcurrent = n })
	// Every run holds its session until all of them hold one.
	p := e.script(t, "hold.ts", `// @permissions clipboard read=go
import { clipboard } from "tranquil/automation";
await clipboard.read();
for (;;) {
  try { Deno.statSync("go"); break; } catch { await new Promise((r) => setTimeout(r, 50)); }
}
`)
	runs := make([]*Run, 0, n)
	ended := func() bool {
		for _, r := range runs {
			select {
			case <-r.Done():
				return true
			default:
			}
		}
		return false
	}
	// Eight starts at a time, each eight once the ones before hold their
	// sessions: what is tested is how many sessions the bridge holds at
	// once, not n processes racing through their handshakes on a busy
	// machine.
	deadline := time.Now().Add(3 * time.Minute)
	for len(runs) < n {
		for range min(8, n-len(runs)) {
			r, err := e.m.Start(context.Background(), Request{Script: p})
			require.NoError(t, err)
			runs = append(runs, r)
		}
		for e.m.bridge.Stats().Sessions < len(runs) && !ended() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	assert.Equal(t, n, e.m.bridge.Stats().Sessions, "every run held a session at once")
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "go"), nil, 0o644))
	for _, r := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		entry, err := r.Wait(ctx)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, history.StateSucceeded, entry.State, "%s %s", entry.Reason, entry.Output)
	}
}

func TestSandbox(t *testing.T) {
	devtools, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer devtools.Close()
	service, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer service.Close()
	go acceptAll(devtools)
	go acceptAll(service)
	e := newMgr(t, func(c *Config) { c.DenyLoopback = []string{devtools.Addr().String()} })
	t.Setenv("TRANQUIL_TEST_SECRET", "host secret")
	e.script(t, "data.txt", "declared")
	e.script(t, "private.txt", "undeclared")
	dport := devtools.Addr().(*net.TCPAddr).Port
	sport := service.Addr().(*net.TCPAddr).Port
	entry := e.runScript(t, "sandbox.ts", fmt.Sprintf(`// @permissions read=data.txt net=127.0.0.1,localhost
import { context } from "tranquil/automation";
const out: Record<string, string> = {};
async function probe(name: string, fn: () => unknown) {
  try { await fn(); out[name] = "ok"; } catch (e) {
    const err = e as Error & { cause?: Error };
    out[name] = err.name === "NotCapable" || /Requires \w+ access/.test(String(err.cause?.message)) ? "NotCapable" : err.name + ": " + err.message;
  }
}
async function dial(hostname: string, port: number) { (await Deno.connect({ hostname, port })).close(); }
await probe("readDeclared", () => Deno.readTextFile("data.txt"));
await probe("readUndeclared", () => Deno.readTextFile("private.txt"));
await probe("envHost", () => Deno.env.get("TRANQUIL_TEST_SECRET"));
await probe("envHome", () => Deno.env.get("HOME"));
await probe("write", () => Deno.writeTextFile("new.txt", "x"));
await probe("netUndeclared", () => fetch("http://127.0.0.2:%d/"));
await probe("command", () => new Deno.Command("/bin/true").output());
await probe("devtools", () => dial("127.0.0.1", %d));
await probe("devtoolsLocalhost", () => dial("localhost", %d));
await probe("service", () => dial("127.0.0.1", %d));
await context.result(out);
`, sport, dport, dport, sport))
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	var got map[string]string
	require.NoError(t, json.Unmarshal(entry.Result, &got))
	assert.Equal(t, map[string]string{
		"readDeclared": "ok", "readUndeclared": "NotCapable", "envHost": "NotCapable", "envHome": "NotCapable",
		"write": "NotCapable", "netUndeclared": "NotCapable", "command": "NotCapable",
		"devtools": "NotCapable", "devtoolsLocalhost": "NotCapable", "service": "ok",
	}, got)
}

func acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func TestHistorySurvivesRestart(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "hist.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\nconsole.log(\"line\");\nawait context.result(\"done\");\n")
	require.Equal(t, history.StateSucceeded, entry.State)
	require.NoError(t, e.m.Close())
	m2, err := New(Config{DataDir: e.data, DenoPath: testenv.Deno(t)})
	require.NoError(t, err)
	defer m2.Close()
	got, ok := m2.History().Get(entry.ID)
	require.True(t, ok)
	assert.Equal(t, entry.State, got.State)
	assert.Equal(t, entry.Script, got.Script)
	assert.JSONEq(t, `"done"`, string(got.Result))
	assert.Contains(t, got.Output, "line")
	assert.Equal(t, "none", got.Permissions)
	assert.Equal(t, entry.Start.Unix(), got.Start.Unix())
}

// waitOutput waits for a line containing want in the run's output events.
func waitOutput(t *testing.T, e *mgrEnv, runID, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		for _, ev := range e.events {
			if ev.RunID == runID && ev.Kind == EventOutput && strings.Contains(ev.Line, want) {
				e.mu.Unlock()
				return
			}
		}
		e.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no output %q from run %s", want, runID)
}

var _ = errors.New

func TestRestartSettlesRunsLeftLive(t *testing.T) {
	root := t.TempDir()
	h, err := history.Open(filepath.Join(root, "history.jsonl"), history.Options{})
	require.NoError(t, err)
	require.NoError(t, h.Put(history.Entry{ID: "left", Script: "/x.ts", State: history.StateRunning, Start: time.Now()}))
	// A durable workflow's run outlives a host: it is the host's to settle.
	require.NoError(t, h.Put(history.Entry{ID: "flow", Kind: history.KindWorkflow, Script: "nightly", State: history.StateRunning, Start: time.Now()}))
	require.NoError(t, h.Close())
	m, err := New(Config{DataDir: root, DenoPath: testenv.Deno(t)})
	require.NoError(t, err)
	defer m.Close()
	e, ok := m.History().Get("left")
	require.True(t, ok)
	assert.Equal(t, history.StateFailed, e.State)
	assert.Equal(t, "the host stopped during the run", e.Reason)
	flow, ok := m.History().Get("flow")
	require.True(t, ok)
	assert.Equal(t, history.StateRunning, flow.State, "a workflow run is left to the host")
	assert.Equal(t, history.KindWorkflow, flow.Kind)
}

func TestResolveDeno(t *testing.T) {
	deno := testenv.Deno(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg  Config
		want string
		err  bool
	}{
		{Config{DenoPath: deno, BundledDeno: "/nonexistent"}, deno, false},
		{Config{BundledDeno: deno}, deno, false},
		{Config{DenoPath: filepath.Join(dir, "missing")}, "", true},
		{Config{DenoPath: dir}, "", true},
		{Config{}, "", true},
	} {
		got, err := resolveDeno(tc.cfg)
		if tc.err {
			assert.ErrorIs(t, err, ErrNoDeno, "%+v", tc.cfg)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	t.Setenv("PATH", filepath.Dir(deno))
	got, err := resolveDeno(Config{AllowPATH: true})
	require.NoError(t, err)
	name := "deno"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	assert.Equal(t, filepath.Join(filepath.Dir(deno), name), got)
	_, err = resolveDeno(Config{})
	assert.ErrorIs(t, err, ErrNoDeno, "PATH is used only when allowed")
	if runtime.GOOS == "windows" {
		return // no execute bit to forget; TestUnusableDenoFailsTheRun starts a broken one
	}

	plain := filepath.Join(dir, "deno-0644")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	_, err = resolveDeno(Config{DenoPath: plain})
	require.ErrorIs(t, err, ErrDenoUnusable)
	assert.Contains(t, err.Error(), "chmod +x", "the message says how to fix it")
}

// A deno that cannot be started is the host's failure, never the script's
// refusal: the run fails, says how to fix it, and the host is told.
func TestUnusableDenoFailsTheRun(t *testing.T) {
	for name, breakIt := range map[string]func(path string){
		"not a program":        func(string) {},
		"no longer executable": func(p string) { require.NoError(t, os.Chmod(p, 0o644)) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			deno := filepath.Join(root, "deno")
			require.NoError(t, os.WriteFile(deno, []byte("this is not a program\n"), 0o755))
			host := newFakeHost()
			m, err := New(Config{DataDir: filepath.Join(root, "data"), DenoPath: deno, Host: Host{UI: host}})
			require.NoError(t, err)
			defer m.Close()
			breakIt(deno)
			script := filepath.Join(root, "s.ts")
			require.NoError(t, os.WriteFile(script, []byte("// @permissions none\nconsole.log(1);\n"), 0o644))
			r, err := m.Start(context.Background(), Request{Script: script})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			entry, err := r.Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, history.StateFailed, entry.State, entry.Reason)
			assert.Contains(t, entry.Reason, "point DenoPath at a working deno")
			assert.Contains(t, entry.Reason, deno)
			select { // the host is told after the run is recorded
			case msg := <-host.notified:
				assert.Contains(t, msg, "point DenoPath at a working deno")
			case <-time.After(10 * time.Second):
				t.Error("the host was not told")
			}
		})
	}
}

func TestConfigValuesAreCheckedAndCorruptStateIsSetAside(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "cfg.ts", `// @permissions none
import { config, context } from "tranquil/automation";
const errors: string[] = [];
for (const v of [new Uint8Array(2), 10n, NaN, new Date(0)]) {
  try { await config.set("bad", v); errors.push("stored"); } catch (e) { errors.push((e as Error).name); }
}
await config.set("good", { a: [1, "two", null, true] });
await context.result({ errors, good: await config.get("good"), missing: (await config.get("nope")) === undefined });
`)
	_, entry := e.run(t, Request{Script: p})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	assert.JSONEq(t, `{"errors":["TypeError","TypeError","TypeError","TypeError"],"good":{"a":[1,"two",null,true]},"missing":true}`, string(entry.Result))

	// Corrupt the script's state file: the next run starts empty and the
	// bad file is kept aside.
	key, _ := consent.ScriptKey(p)
	path := e.m.state.path(key)
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	_, ok, err := e.m.state.get(key, "good")
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = os.Stat(path + ".corrupt")
	assert.NoError(t, err)
}

func TestPlanAndCacheWarm(t *testing.T) {
	e := newMgr(t, nil)
	ctx := context.Background()
	warm, err := e.m.CacheWarm(ctx)
	require.NoError(t, err)
	assert.True(t, warm, "Prepare filled the cache")

	p := e.script(t, "plan.ts", "// @permissions clipboard net=api.example.com\nconsole.log(1)\n")
	plan, err := e.m.Plan(ctx, Request{Script: p})
	require.NoError(t, err)
	require.NoError(t, plan.Refused)
	assert.False(t, plan.Approved)
	assert.Nil(t, plan.Approval)
	assert.Equal(t, "run", plan.Args[0])
	assert.Contains(t, plan.Args, "--allow-net="+e.m.Bridge().Addr()+",api.example.com")
	assert.Contains(t, plan.Capabilities, permissions.CapClipboard)
	require.Len(t, plan.Grants, 2)

	entry := e.runScript(t, "plan.ts", "// @permissions clipboard net=api.example.com\nconsole.log(1)\n")
	require.Equal(t, history.StateSucceeded, entry.State)
	plan, err = e.m.Plan(ctx, Request{Script: p})
	require.NoError(t, err)
	assert.True(t, plan.Approved)

	bad := e.script(t, "bad.ts", "// @permissions brwoser\n")
	plan, err = e.m.Plan(ctx, Request{Script: bad})
	require.NoError(t, err)
	assert.ErrorIs(t, plan.Refused, permissions.ErrUnknownKey)

	e.script(t, "secret.txt", "s")
	imp := e.script(t, "imp.ts", "// @permissions none\nimport s from \"./secret.txt\" with { type: \"text\" };\nconsole.log(s);\n")
	plan, err = e.m.Plan(ctx, Request{Script: imp})
	require.NoError(t, err)
	assert.ErrorIs(t, plan.Refused, ErrUndeclaredImport)
}

func TestCacheCold(t *testing.T) {
	root := t.TempDir()
	m, err := New(Config{DataDir: root, DenoPath: testenv.Deno(t)})
	require.NoError(t, err)
	defer m.Close()
	warm, err := m.CacheWarm(context.Background())
	require.NoError(t, err)
	assert.False(t, warm, "a fresh cache is cold")
}

func TestHugeOutputIsCappedAndDrained(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.OutputCap = 64 << 10 })
	entry := e.runScript(t, "flood.ts", `// @permissions none
const enc = new TextEncoder();
await Deno.stdout.write(enc.encode("first line\n"));
await Deno.stdout.write(enc.encode("x".repeat(8 << 20) + "\n")); // one 8 MiB line
for (let i = 0; i < 5000; i++) console.log("line " + i);
console.error("last words");
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.True(t, entry.OutputTruncated)
	assert.LessOrEqual(t, len(entry.Output), 64<<10+256, "the kept output respects the cap")
	assert.True(t, strings.HasPrefix(entry.Output, "first line\n"), "the head is kept")
	assert.Contains(t, entry.Output, "last words", "and the tail")
	e.mu.Lock()
	defer e.mu.Unlock()
	sent := 0
	for _, ev := range e.events {
		if ev.Kind == EventOutput && ev.RunID == entry.ID {
			sent += len(ev.Line)
			assert.LessOrEqual(t, len(ev.Line), maxEventLine, "a long line arrives in pieces")
		}
	}
	assert.LessOrEqual(t, sent, 64<<10+128, "output events respect the cap too")
}

func TestSelectionLeftByDeadHostIsRemovedOnStart(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	data := filepath.Join(root, "data")
	require.NoError(t, os.MkdirAll(data, 0o700))
	stale := filepath.Join(root, "scripts", ".runs", "dead-run.ts")
	require.NoError(t, os.MkdirAll(filepath.Dir(stale), 0o700))
	require.NoError(t, os.WriteFile(stale, []byte("console.log(1)"), 0o600))
	unrelated := filepath.Join(root, "scripts", "keep.ts")
	require.NoError(t, os.WriteFile(unrelated, nil, 0o600))
	ledger, _ := json.Marshal([]string{stale, unrelated})
	require.NoError(t, os.WriteFile(filepath.Join(data, "selections.json"), ledger, 0o600))

	m, err := New(Config{DataDir: data, DenoPath: testenv.Deno(t)})
	require.NoError(t, err)
	defer m.Close()
	_, err = os.Stat(stale)
	assert.True(t, os.IsNotExist(err), "the selection file is gone")
	_, err = os.Stat(filepath.Dir(stale))
	assert.True(t, os.IsNotExist(err), "and its folder")
	_, err = os.Stat(unrelated)
	assert.NoError(t, err, "a path outside a .runs folder is never deleted")
}

func TestGrantsCannotReachHostData(t *testing.T) {
	e := newMgr(t, nil)
	for _, hdr := range []string{"write=" + e.data + "/consent.json", "read=" + e.data, "write=" + testenv.DenoCacheDir(t) + "/npm"} {
		entry := e.runScript(t, "greedy.ts", "// @permissions "+hdr+"\nconsole.log(1)\n")
		assert.Equal(t, history.StateRefused, entry.State, hdr)
		assert.Contains(t, entry.Reason, "host's own data", hdr)
	}
}
