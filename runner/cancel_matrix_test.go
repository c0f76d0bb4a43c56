package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/leakcheck"
	"github.com/tranquil/automation/runner"
)

// matrixGrace is the scripts' grace in the cancellation matrix: long
// enough that a run settling well within it shows the cancel reached the
// point it stood at, rather than the grace running out.
const matrixGrace = 3 * time.Second

// stuckPrompter holds every prompt open, ignoring its context, until the
// test ends: the worst host a run waiting for consent can have.
type stuckPrompter struct {
	asked, release chan struct{}
}

func (p stuckPrompter) Ask(context.Context, consent.Request) (consent.Answer, error) {
	p.asked <- struct{}{}
	<-p.release
	return consent.Deny, nil
}

// stuckClipboard's Read waits for its context: a host call that lasts
// until it is called off.
type stuckClipboard struct{}

func (stuckClipboard) Read(ctx context.Context, _ runner.RunInfo) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func (stuckClipboard) Write(context.Context, runner.RunInfo, string) error { return nil }

// A cancelled run settles within its grace and half a second wherever it
// stands, is recorded cancelled once, and leaves no process or goroutine
// behind: waiting for consent (a prompter that ignores its context),
// queued behind another run, just started (its module check), its process
// started but not yet connected, in a host call of the app's (the
// clipboard) and of the browser's (a 5-minute expectation), and in a
// step's retry backoff. A script in a host call learns at once: the call
// fails with code cancelled after context.signal has aborted, and the
// script's own clean-up runs.
func TestCancellationMatrix(t *testing.T) {
	type point struct {
		name   string
		perms  string
		body   string
		config func(*runner.Config, *browserEnv)
		// reach starts the run (or runs) and returns once it stands at the
		// point; nil starts it and goes on at once.
		reach func(t *testing.T, e *browserEnv, start func() *runner.Run) *runner.Run
		// ready is the line the script prints just before the call the
		// cancel is to reach; said, the line it prints when it did.
		ready, said string
	}
	waitState := func(t *testing.T, r *runner.Run, want history.State) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for r.State() != want {
			require.True(t, time.Now().Before(deadline), "the run never reached %s (it is %s)", want, r.State())
			time.Sleep(time.Millisecond)
		}
	}
	prompter := stuckPrompter{asked: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(prompter.release)
	points := []point{{
		name: "waiting for consent", perms: "clipboard", body: `await context.result("ran");`,
		config: func(c *runner.Config, e *browserEnv) {
			store, err := consent.OpenStore(t.TempDir()+"/consent.json", consent.StoreOptions{})
			require.NoError(t, err)
			c.Gate = consent.NewGate(store, prompter)
		},
		reach: func(t *testing.T, e *browserEnv, start func() *runner.Run) *runner.Run {
			r := start()
			select {
			case <-prompter.asked:
			case <-time.After(60 * time.Second):
				t.Fatal("the run never asked for consent")
			}
			return r
		},
	}, {
		name: "queued", perms: "none", body: `await context.result("ran");`,
		config: func(c *runner.Config, e *browserEnv) { c.MaxConcurrent = 1 },
		reach: func(t *testing.T, e *browserEnv, start func() *runner.Run) *runner.Run {
			busy := e.startScript(t, "busy.ts", "// @permissions none\nimport \"tranquil/automation\";\nconsole.log(\"busy\");\nawait new Promise(() => {});\n")
			t.Cleanup(func() { busy.Cancel("the test is over"); e.wait(t, busy) })
			e.waitLine(t, busy, "busy")
			r := start()
			waitState(t, r, history.StateQueued)
			time.Sleep(100 * time.Millisecond) // past its module check, in the line
			return r
		},
	}, {
		name: "just started", perms: "none", body: `await context.result("ran");`,
	}, {
		name: "started not yet connected", perms: "none", body: `await context.result("ran");`,
		reach: func(t *testing.T, e *browserEnv, start func() *runner.Run) *runner.Run {
			r := start()
			waitState(t, r, history.StateStarting)
			return r
		},
	}, {
		name: "in an app call", perms: "clipboard",
		body: `console.log("reading");
try { await clipboard.read(); } catch (e) { console.log("call ended: " + e.code + " aborted=" + context.signal.aborted + " " + e.name + " " + e.message); }`,
		config: func(c *runner.Config, e *browserEnv) { c.Host.Clipboard = stuckClipboard{} },
		ready:  "reading", said: "call ended: cancelled aborted=true",
	}, {
		name: "in a browser call", perms: "browser",
		body: `const tab = await tabs.open(SITE);
console.log("expecting");
try {
  await tab.expect({ selector: "#never" }).toBeVisible({ timeout: 300000 });
} catch (e) {
  console.log("call ended: " + e.code + " aborted=" + context.signal.aborted);
}`,
		ready: "expecting", said: "call ended: cancelled aborted=true",
	}, {
		name: "in a step's retry backoff", perms: "none",
		body: `let n = 0;
try {
  await step.do("flaky", () => { n++; if (n === 1) console.log("failing once"); throw new Error("not yet"); }, { retries: 5, delay: 60000 });
} catch (e) {
  console.log("step ended: " + e.name + " aborted=" + context.signal.aborted);
}`,
		ready: "failing once", said: "step ended: CancelledError aborted=true",
	}}
	// One browser for every point: each has a manager of its own, and only
	// the browser call's point opens a tab, which its run's end closes.
	bt := launchBrowser(t)
	for _, p := range points {
		before := leakcheck.Snapshot()
		t.Run(p.name, func(t *testing.T) {
			e := newBrowserEnvWith(t, envOptions{tabs: bt, config: func(c *runner.Config) {
				c.CancelGrace = matrixGrace
				if p.config != nil {
					p.config(c, nil)
				}
			}})
			src := fmt.Sprintf("// @permissions %s\n// @timeout 10m\nimport { clipboard, context, step, tabs } from \"tranquil/automation\";\nconst SITE = %q;\n%s\n",
				p.perms, e.site.URL+"/", p.body)
			start := func() *runner.Run { return e.startScript(t, "point.ts", src) }
			var r *runner.Run
			switch {
			case p.reach != nil:
				r = p.reach(t, e, start)
			case p.said != "":
				r = start()
				// The line printed just before the call, and a moment for
				// the call to reach the host.
				e.waitLine(t, r, p.ready)
				time.Sleep(200 * time.Millisecond)
			default:
				r = start()
			}
			at := time.Now()
			r.Cancel("the user stopped it")
			ctx, cancel := context.WithTimeout(context.Background(), matrixGrace+30*time.Second)
			defer cancel()
			entry, err := r.Wait(ctx)
			took := time.Since(at)
			require.NoError(t, err)
			t.Logf("%s: settled %v after Cancel (grace %v)", p.name, took.Round(time.Millisecond), matrixGrace)
			assert.Equal(t, history.StateCancelled, entry.State, "%s\n%s", entry.Reason, entry.Output)
			assert.Equal(t, "the user stopped it", entry.Reason)
			assert.Less(t, took, matrixGrace+500*time.Millisecond, "settled within the grace and half a second")
			if p.said != "" {
				assert.Contains(t, entry.Output, p.said, "the cancel reached the script where it stood")
				assert.Less(t, took, matrixGrace, "the script ended of itself, before its grace ran out")
			}
			got, ok := e.m.History().Get(r.ID())
			require.True(t, ok)
			assert.Equal(t, history.StateCancelled, got.State, "recorded cancelled")
			n := 0
			for _, h := range e.m.History().List() {
				if h.ID == r.ID() {
					n++
				}
			}
			assert.Equal(t, 1, n, "recorded once")
		})
		// The subtest's manager is closed: nothing of the run's is left.
		var left []string
		for _, g := range before.Since(10 * time.Second) {
			// The test's prompter holds its goroutine until the test ends.
			if (strings.Contains(g, "github.com/tranquil/automation/") || strings.Contains(g, "os/exec.")) && !strings.Contains(g, "stuckPrompter") {
				left = append(left, g)
			}
		}
		assert.Empty(t, left, "%s: goroutines left", p.name)
		assert.Empty(t, runner.LeftDeno(), "%s: deno processes left", p.name)
	}
}
