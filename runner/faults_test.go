package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// startScript writes and starts a script in the environment's folder.
func (e *browserEnv) startScript(t testing.TB, name, src string) *runner.Run {
	t.Helper()
	p := filepath.Join(e.dir, name)
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	r, err := e.m.Start(context.Background(), runner.Request{Script: p})
	require.NoError(t, err)
	return r
}

// waitLine waits until run r printed a line containing want; it fails at
// once when r ends first.
func (e *browserEnv) waitLine(t testing.TB, r *runner.Run, want string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		e.outMu.Lock()
		seen := slices.ContainsFunc(e.lines, func(l string) bool { return strings.Contains(l, want) })
		e.outMu.Unlock()
		if seen {
			return
		}
		select {
		case <-r.Done():
			entry, _ := r.Wait(context.Background())
			t.Fatalf("the run ended %s before printing %q: %s\n%s", entry.State, want, entry.Reason, entry.Output)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no output %q", want)
}

// A browser that dies under a run gives every browser call the documented
// code closed, and nothing a script sees names a DevTools endpoint: not
// the one the runner held, nor the one it would reconnect to.
func TestDeadBrowserIsClosedAndNamesNoEndpoint(t *testing.T) {
	for name, o := range map[string]envOptions{
		"launched-killed":             {},
		"attached-closed":             {devtoolsPort: true},
		"attached-closed-by-endpoint": {devtoolsPort: true, byEndpoint: true},
	} {
		attached := o.devtoolsPort
		t.Run(name, func(t *testing.T) {
			e := newBrowserEnvWith(t, o)
			r := e.startScript(t, "dies.ts", `// @permissions browser read=go
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.url();
console.log("READY");
for (;;) {
  try { Deno.statSync("go"); break; } catch { await new Promise((r) => setTimeout(r, 20)); }
}
const calls: [string, () => Promise<unknown>][] = [
  ["tab.url", () => tab.url()],
  ["tab.goto", () => tab.goto("`+e.site.URL+`/p/1")],
  ["tab.url again", () => tab.url()],
  ["tabs.active", () => tabs.active()],
  ["tabs.all", () => tabs.all()],
  ["tabs.open", () => tabs.open("`+e.site.URL+`/p/2", { background: true })],
];
const out: Record<string, string> = {};
for (const [name, call] of calls) {
  try { await call(); out[name] = "resolved"; } catch (err) { out[name] = (err as { code?: string }).code + " | " + String(err) + " | " + (err as Error).stack; }
}
await context.result(out);
`)
			e.waitLine(t, r, "READY")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if attached {
				_ = e.tabs.Browser().Client().Browser.Close(ctx)
			} else {
				require.NoError(t, e.tabs.Process().Kill())
			}
			select {
			case <-e.tabs.Browser().Done():
			case <-ctx.Done():
				t.Fatal("the connection outlived the browser")
			}
			require.NoError(t, os.WriteFile(filepath.Join(e.dir, "go"), nil, 0o644))
			entry, err := r.Wait(ctx)
			require.NoError(t, err)
			var got map[string]string
			result(t, entry, &got)
			require.Len(t, got, 6)
			for call, outcome := range got {
				code, _, _ := strings.Cut(outcome, " | ")
				assert.Equal(t, "closed", code, "%s: %s", call, outcome)
				for _, leak := range []string{"devtools", "ws://", "DevToolsActivePort"} {
					assert.NotContains(t, strings.ToLower(outcome), strings.ToLower(leak), "%s: %s", call, outcome)
				}
				if attached {
					assert.NotContains(t, outcome, ":"+strconv.Itoa(e.tabs.Port()), "%s: %s", call, outcome)
				}
			}
			assert.NotContains(t, strings.ToLower(entry.Output), "/devtools/", "the run's output")
		})
	}
}

// Concurrent browser runs each ask for the active tab while they open,
// fill and close tabs in the background: the answer is always the tab the
// user sees (the site's home page), never a run's background tab. And the
// browser never holds more pages than the visible one plus the background
// slots: a closing tab still counts until it is gone.
func TestConcurrentRunsSeeTheShownTab(t *testing.T) {
	const runs = 8
	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) { c.MaxConcurrent = runs }})
	home := e.site.URL + "/"
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		most := 0
		defer func() { sampled <- most }()
		for {
			if all, err := e.tabs.All(context.Background(), runner.RunInfo{}); err == nil {
				most = max(most, len(all))
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	src := `// @permissions browser forms sites=127.0.0.1
import { context, tabs } from "tranquil/automation";
const home = "` + home + `";
const bad: string[] = [];
const check = async (mine: string) => {
  const a = await tabs.active();
  if (a.id === mine) { bad.push("its own background tab"); return; }
  try {
    const url = await a.url();
    if (url !== home) bad.push(url);
  } catch (e) { bad.push(String(e)); }
};
for (let round = 0; round < 3; round++) {
  const mine = await tabs.open("` + e.site.URL + `/form", { background: true });
  await check(mine.id);
  await mine.fill({ label: "Card holder" }, "run " + round);
  for (let i = 0; i < 5; i++) await check(mine.id);
  await mine.close();
  await check("");
}
await context.result(bad);
`
	var started []*runner.Run
	for i := range runs {
		started = append(started, e.startScript(t, fmt.Sprintf("active%d.ts", i), src))
	}
	for _, r := range started {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		entry, err := r.Wait(ctx)
		cancel()
		require.NoError(t, err)
		var bad []string
		result(t, entry, &bad)
		assert.Empty(t, bad, "run %s was answered another tab than the one shown", r.ID())
	}
	close(stop)
	assert.LessOrEqual(t, <-sampled, 1+runner.DefaultMaxBackgroundTabs, "pages open at once: the shown one and the background slots")
}

// lingeringTabs closes tabs the way a browser may: the close is answered
// at once, the tab goes a moment later.
type lingeringTabs struct {
	*countingTabs
	wg *sync.WaitGroup
}

func (l lingeringTabs) Close(ctx context.Context, run runner.RunInfo, id string) error {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		time.Sleep(300 * time.Millisecond)
		l.countingTabs.Close(context.Background(), run, id)
	}()
	return nil
}

func TestTabCloseWaitsUntilTheTabIsGone(t *testing.T) {
	t.Parallel() // see parallel_test.go
	var wg sync.WaitGroup
	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) {
		c.Host.Tabs = lingeringTabs{countingTabs: c.Host.Tabs.(*countingTabs), wg: &wg}
	}})
	t.Cleanup(wg.Wait)
	entry := e.run(t, "close.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open("`+e.site.URL+`/p/1", { background: true });
await tab.close();
await context.result((await tabs.all()).some((t) => t.id === tab.id));
`)
	var listed bool
	result(t, entry, &listed)
	assert.False(t, listed, "tab.close resolved while the tab was still listed")
}

// smallDisk mounts a tmpfs of size bytes for the test. It needs root;
// without it the history package's injected-failure tests stand in.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; history's TestFullDiskKeepsTheOutcome injects the failure instead")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("cannot mount a tmpfs as root: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill takes every free byte of the filesystem at dir.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for len(chunk) > 0 {
		if _, err := f.Write(chunk); err != nil {
			chunk = chunk[:len(chunk)/2]
		}
	}
	return p
}

// notes records what the host was told.
type notes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notes) Notify(_ context.Context, _ runner.RunInfo, msg string, _ runner.Level) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, msg)
	return nil
}

func (n *notes) Open(context.Context, runner.RunInfo, string, runner.OpenOptions) error { return nil }

func (n *notes) saying(s string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, m := range n.msgs {
		if strings.Contains(m, s) {
			c++
		}
	}
	return c
}

// After a full disk every succeeded run still reads succeeded, now and
// after a restart, and the host is told what could not be saved.
func TestFullDiskKeepsEveryOutcome(t *testing.T) {
	small := smallDisk(t, 2<<20)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	scripts := filepath.Join(root, "scripts")
	require.NoError(t, os.MkdirAll(scripts, 0o755))
	store, err := consent.OpenStore(filepath.Join(small, "consent.json"), consent.StoreOptions{})
	require.NoError(t, err)
	gate := consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
		return consent.Approve, nil
	}))
	histPath := filepath.Join(small, "history.jsonl")
	hist, err := history.Open(histPath, history.Options{})
	require.NoError(t, err)
	told := &notes{}
	const runs = 8
	m, err := runner.New(runner.Config{
		DataDir: filepath.Join(root, "data"), CacheDir: testenv.DenoCacheDir(t), DenoPath: testenv.Deno(t),
		Host: runner.Host{UI: told}, Gate: gate, History: hist, MaxConcurrent: runs,
	})
	require.NoError(t, err)
	defer m.Close()
	wait := func(r *runner.Run) history.Entry {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		entry, err := r.Wait(ctx)
		require.NoError(t, err)
		return entry
	}
	start := func(name, src string) *runner.Run {
		p := filepath.Join(scripts, name)
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		r, err := m.Start(context.Background(), runner.Request{Script: p})
		require.NoError(t, err)
		return r
	}

	// A disk with no room at all: neither the approval nor any entry can
	// be saved, the run still runs, and the host hears of both.
	filler := fill(t, small)
	first := wait(start("first.ts", "// @permissions clipboard\nconsole.log('first');\n"))
	require.Equal(t, history.StateSucceeded, first.State, first.Reason)
	assert.Equal(t, 1, told.saying("the approval could not be saved"), told.msgs)
	assert.Equal(t, 1, told.saying("could not save this run"), told.msgs)
	require.NoError(t, os.Remove(filler))

	// Room for the small early writes, not for every output: the last
	// writes would not fit.
	var started []*runner.Run
	for i := range runs {
		started = append(started, start(fmt.Sprintf("big%d.ts", i), `// @permissions none
const line = "x".repeat(999);
for (let i = 0; i < 400; i++) console.log(line);
`))
	}
	var ids []string
	for _, r := range started {
		e := wait(r)
		require.Equal(t, history.StateSucceeded, e.State, e.Reason)
		ids = append(ids, e.ID)
	}
	assert.Positive(t, told.saying("kept this run's outcome but not all of its output"), told.msgs)
	ids = append(ids, first.ID) // retried once there was room again
	require.NoError(t, m.Close())

	again, err := history.Open(histPath, history.Options{})
	require.NoError(t, err)
	for _, id := range ids {
		e, ok := again.Get(id)
		require.True(t, ok, "run %s is in the history", id)
		assert.Equal(t, history.StateSucceeded, e.State, "run %s: %s", id, e.Reason)
	}
}
