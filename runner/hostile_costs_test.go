package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// heapPeak samples the Go heap's objects, garbage not yet collected
// included, every millisecond until the returned function is called,
// which returns the peak growth over the start.
func heapPeak() func() int64 { return testenv.PeakOf(testenv.HeapObjects) }

// livePeak is heapPeak for the live heap as of the last collection: what
// the host held, without the garbage a collection would free.
func livePeak() func() int64 { return testenv.PeakOf("/gc/heap/live:bytes") }

// Two page-js runs at once each make the page return about 24 MB of JSON
// of many small objects, which decodes to far more than the run's memory
// budget: each fails limit_exceeded naming memory before the value is
// built, a benign run beside them succeeds, and the host's heap stays
// within a few budgets (it grew by about 1.3 GiB per run, and killed a
// host under a 2.5 GiB cap, when results were decoded first and charged
// after).
func TestHostileEvaluateResultIsChargedBeforeItIsBuilt(t *testing.T) {
	const budget = 32 << 20
	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) { c.SessionBudget = budget }})
	big := fmt.Sprintf(`// @permissions browser page-js
// @timeout 90s
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
try {
  const rows = await tab.evaluate(() => Array.from({ length: 800000 }, (_, i) => ({ i, s: "ab" })));
  await context.result({ got: rows.length });
} catch (e) {
  await context.result({ code: e.code, message: e.message });
}
`, e.site.URL+"/")
	growth := heapPeak()
	var wg sync.WaitGroup
	entries := make([]history.Entry, 2)
	for i := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries[i] = e.run(t, fmt.Sprintf("big-%d.ts", i), big)
		}()
	}
	benign := e.run(t, "benign.ts", fmt.Sprintf(`// @permissions browser page-js
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
await context.result(await tab.evaluate(() => document.title));
`, e.site.URL+"/"))
	wg.Wait()
	grown := growth()
	require.Equal(t, history.StateSucceeded, benign.State, "%s %s", benign.Reason, benign.Output)
	require.JSONEq(t, `"Home"`, string(benign.Result))
	for _, entry := range entries {
		require.Equal(t, history.StateFailed, entry.State, "%s %s %s", entry.Reason, entry.Result, entry.Output)
		require.True(t, strings.HasPrefix(entry.Reason, "limit_exceeded: memory: "), entry.Reason)
		t.Log(entry.Reason)
	}
	t.Logf("host heap peak: %+.1f MiB over the start (budget %d MiB per run)", float64(grown)/(1<<20), budget>>20)
	require.Less(t, grown, int64(8*budget), "the host's heap grew past a few budgets")
}

// A run that opens tabs up to every slot and holds them gets its share
// (half the slots) and a clear refusal for the rest, and another run's
// tabs.open goes through at once (it waited 30 s and failed when one run
// could take every slot).
func TestHostileTabHogGetsItsShare(t *testing.T) {
	e := newBrowserEnv(t)
	hog := e.startScript(t, "hog.ts", fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
const held = await Promise.allSettled(Array.from({ length: %d }, () =>
  tabs.open(%q, { background: true, timeout: 1500 })));
console.log(JSON.stringify(held.map((r) => r.status === "fulfilled" ? "open" : r.reason.code + ": " + r.reason.message)));
await new Promise((r) => setTimeout(r, 60000));
`, runner.DefaultMaxBackgroundTabs, e.site.URL+"/p/1"))
	var held []string
	require.Eventually(t, func() bool {
		e.outMu.Lock()
		defer e.outMu.Unlock()
		for _, l := range e.lines {
			if strings.HasPrefix(l, "[") {
				return json.Unmarshal([]byte(l), &held) == nil
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond)
	share := runner.DefaultMaxBackgroundTabs / 2
	opened := 0
	for _, h := range held {
		if h == "open" {
			opened++
		} else {
			require.Contains(t, h, "this run holds its share")
		}
	}
	require.Equal(t, share, opened, "%q", held)

	start := time.Now()
	other := e.run(t, "other.ts", fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q, { background: true });
await context.result(await tab.title());
`, e.site.URL+"/p/2"))
	took := time.Since(start)
	require.Equal(t, history.StateSucceeded, other.State, "%s %s", other.Reason, other.Output)
	require.JSONEq(t, `"Page 2"`, string(other.Result))
	require.Less(t, took, 10*time.Second)
	t.Logf("another run's open beside the hog: %v", took.Round(time.Millisecond))
	hog.Cancel("done")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := hog.Wait(ctx)
	require.NoError(t, err)
}

// A run that leaves 250 waits pending on one page (each polls the page
// until its timeout) makes the checks of the run's check rate, not 250
// calls' worth: against the same run unpaced (Config.CheckRate negative),
// in one test, with the host CPU of each. Unpaced, 2,000 such waits took
// about 21 s of host CPU on an idle machine. (The default rate is held
// by TestCheckPacerHoldsItsRate.)
func TestManyPendingWaitsShareTheRunsCheckRate(t *testing.T) {
	const waits, timeout = 250, 4 * time.Second
	// A rate well below what the browser answers on a loaded machine
	// (about 100 checks a second on two busy cores), so that the bound
	// shows.
	const rate = 20
	src := func(url string) string {
		return fmt.Sprintf(`// @permissions browser
// @timeout 60s
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
const waits = [];
for (let i = 0; i < %d; i++) waits.push(tab.waitFor("#never-" + i, { timeout: %d }).then(() => "held", (e) => e.code));
const codes = await Promise.all(waits);
await context.result({ timeouts: codes.filter((c) => c === "timeout").length });
`, url, waits, timeout.Milliseconds())
	}
	// Both managers drive one browser: the checks counted are the run's
	// own, and the CPU measured is this process's, not the browser's.
	bt := launchBrowser(t)
	cost := func(rate int) (checks int64, cpu time.Duration) {
		e := newBrowserEnvWith(t, envOptions{tabs: bt, config: func(c *runner.Config) { c.CheckRate = rate }})
		before := cpuTime(t)
		r := e.startScript(t, "waits.ts", src(e.site.URL+"/"))
		entry := e.wait(t, r)
		cpu = cpuTime(t) - before
		require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
		require.JSONEq(t, fmt.Sprintf(`{"timeouts":%d}`, waits), string(entry.Result))
		return runner.Checks(r), cpu
	}
	unpaced, unpacedCPU := cost(-1)
	paced, pacedCPU := cost(rate)
	t.Logf("%d waits pending for %v: %d checks and %v of host CPU at %d checks a second; %d checks and %v unpaced",
		waits, timeout, paced, pacedCPU, rate, unpaced, unpacedCPU)
	// The rate for the waits' time, its quarter second of burst, and the
	// time the last waits started late on a loaded machine.
	assert.LessOrEqual(t, paced, int64(rate*(timeout.Seconds()+0.25+1)), "the run's checks keep to its rate")
	assert.Greater(t, unpaced, 2*paced, "unpaced, the same waits check far more often")
}

// A page that throws errors of megabytes, and an answer too large for the
// script's connection: each call fails on its own with a bounded error, and
// the run goes on. The errors were quoted whole (twice) into the frame to
// the script, which refused a frame past 32 MiB and so ended the run
// ("the host closed the connection (1009 message too big)").
func TestHostileHugeAnswersFailTheirCallOnly(t *testing.T) {
	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) { c.SessionBudget = 256 << 20 }})
	entry := e.run(t, "huge.ts", fmt.Sprintf(`// @permissions browser page-js
// @timeout 90s
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
const out = {};
for (const [k, f] of [
  ["error", () => { throw new Error("x".repeat(16 << 20)); }],
  ["string", () => { throw "y".repeat(16 << 20); }],
  ["rejection", () => Promise.reject(new TypeError("z".repeat(16 << 20)))],
  ["name", () => { const e = new Error("m"); e.name = "N".repeat(1 << 20); throw e; }],
  ["result", () => "r".repeat(40 << 20)],
]) {
  try {
    const v = await tab.evaluate(f);
    out[k] = { length: v.length };
  } catch (e) {
    out[k] = { code: e.code, limit: e.details?.limit, message: e.message.length, cut: e.message.includes(" bytes cut]"),
      remote: e.remoteMessage?.length, remoteName: e.remoteName?.length, all: JSON.stringify(e).length };
  }
}
out.after = { tail: await tab.evaluate(() => document.title) };
await context.result(out);
`, e.site.URL+"/"))
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	var got map[string]struct {
		Code                               string
		Limit, Message, Remote, RemoteName int
		All, Length                        int
		Tail                               string
		Cut                                bool
	}
	require.NoError(t, json.Unmarshal(entry.Result, &got), string(entry.Result))
	for _, k := range []string{"error", "string", "rejection", "name"} {
		g := got[k]
		require.Equal(t, string(errcode.EvalError), g.Code, "%s: %s", k, entry.Result)
		require.Less(t, g.All, 64<<10, "%s: the error the script got is bounded", k)
		require.Less(t, g.Remote, 9<<10, k)
		require.Less(t, g.RemoteName, 1<<10, k)
	}
	require.True(t, got["error"].Cut, "a cut message says so: %s", entry.Result)
	require.Equal(t, string(errcode.LimitExceeded), got["result"].Code, "%s", entry.Result)
	require.Equal(t, 32<<20, got["result"].Limit)
	require.Less(t, got["result"].All, 4<<10)
	require.Equal(t, "Home", got["after"].Tail, "the run went on")
}
