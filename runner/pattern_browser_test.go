package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// slowPattern is 100 bytes within the pattern limits (9,003 instructions)
// that a megabyte of letters keeps matching for the better part of a
// minute, and never matches.
const slowPattern = `[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}[a-z]{1000}!`

// patternSite serves /big: a status and a megabyte of text.
func patternSite(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<title>Big</title><p role=status>Saved</p><p id=big></p>
<script>document.getElementById("big").textContent = "a".repeat(1 << 20);</script>`)
	})
	srv := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(srv.Close)
	return srv
}

// Patterns past the limits, four at once as an attack would send them,
// are refused with limit_exceeded at once, and the host's heap hardly
// grows; a pattern that matches slowly ends with its timeout.
func TestHostilePatterns(t *testing.T) {
	// No trace: its evidence of the failed slow match (a screenshot and an
	// outline of this megabyte page, bounded by a second of its own) would
	// add to the call's time what this test does not measure.
	e := newBrowserEnvWith(t, envOptions{site: patternSite(t), config: func(c *runner.Config) { c.NoTrace = true }})
	peak := heapPeak()
	entry := e.run(t, "patterns.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/big");
const status = tab.expect({ role: "status" });
const outcome = async (re: RegExp, timeout?: number) => {
  const start = Date.now();
  try {
    await status.toHaveText(re, timeout ? { timeout } : {});
    return { ok: true, ms: Date.now() - start };
  } catch (err) {
    const e = err as { code: string; details?: { limit?: number }; message: string; name: string };
    return { code: e.code, limit: e.details?.limit ?? null, name: e.name, message: e.message.slice(0, 300), ms: Date.now() - start };
  }
};
const huge = new RegExp("(?:a|b)".repeat((2 << 20) / 7));
const out: Record<string, unknown> = {};
out.huge = await Promise.all([1, 2, 3, 4].map(() => outcome(huge)));
out.twoKiB = await outcome(new RegExp("x".repeat(2 << 10)));
out.program = await outcome(new RegExp("[a-z]{1000}".repeat(11)));
out.fine = await outcome(/^saved$/i);
const start = Date.now();
try {
  await tab.expect({ selector: "#big" }).toHaveText(new RegExp(`+"`"+slowPattern+"`"+`), { timeout: 1000 });
  out.slow = { ok: true };
} catch (err) {
  const e = err as { code: string; message: string };
  out.slow = { code: e.code, message: e.message.slice(0, 300), ms: Date.now() - start };
}
await context.result(out);
`)
	grown := peak()
	if entry.State != history.StateSucceeded {
		t.Fatalf("%s: %.500s\n%.2000s", entry.State, entry.Reason, entry.Output)
	}
	type outcome struct {
		OK                  bool
		Code, Name, Message string
		Limit               int
		Ms                  float64
	}
	var res struct {
		Huge                        []outcome
		TwoKiB, Program, Fine, Slow outcome
	}
	result(t, entry, &res)
	t.Logf("host heap peak: %+.1f MiB over the start", float64(grown)/(1<<20))
	t.Logf("%+v", res)

	require.Len(t, res.Huge, 4)
	for _, o := range append(res.Huge, res.TwoKiB) {
		assert.Equal(t, "limit_exceeded", o.Code, "%+v", o)
		assert.Equal(t, "TabError", o.Name)
		assert.Equal(t, cdp.MaxPatternBytes, o.Limit)
		assert.Contains(t, o.Message, "at most 1024")
	}
	// The 2 MB ones take what sending 8 MB over the bridge takes on a
	// loaded machine; compiled, they took the expectation's 5 s.
	for _, o := range res.Huge {
		assert.Less(t, o.Ms, 4000.0, "refused without being compiled")
	}
	assert.Less(t, res.TwoKiB.Ms, 1000.0, "refused at once")
	assert.Equal(t, "limit_exceeded", res.Program.Code, "%+v", res.Program)
	assert.Equal(t, cdp.MaxPatternInstructions, res.Program.Limit)
	assert.Contains(t, res.Program.Message, "more than 10000 instructions")
	assert.True(t, res.Fine.OK, "%+v", res.Fine)
	// Four 2 MB patterns once took the host 2.9 GiB to compile; what is
	// left is the frames that carried them.
	assert.Less(t, grown, int64(128<<20), "the host's heap grew by %d MiB", grown>>20)

	assert.Equal(t, "timeout", res.Slow.Code, "%+v", res.Slow)
	assert.Less(t, res.Slow.Ms, 1500.0, "the match ends with its 1 s timeout")
}

// A run cancelled while the host matches a slow pattern stops the host's
// work with it: the host's CPU goes quiet once the run has ended.
func TestCancelStopsAPatternMatch(t *testing.T) {
	e := newBrowserEnvWith(t, envOptions{site: patternSite(t)})
	r := e.startScript(t, "slow.ts", `// @permissions browser
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/big");
console.log("matching");
await tab.expect({ selector: "#big" }).toHaveText(new RegExp(`+"`"+slowPattern+"`"+`), { timeout: 120000 });
`)
	e.waitLine(t, r, "matching")
	busy := func(window time.Duration) float64 {
		before := cpuTime(t)
		time.Sleep(window)
		return float64(cpuTime(t)-before) / float64(window)
	}
	// The match is under way once this process has spent half a second of
	// CPU since the script said so: an idle host spends a few
	// milliseconds, and a busy machine only stretches the wait (a rate,
	// such as most of a core, is what a busy machine denies it).
	start, deadline := cpuTime(t), time.Now().Add(60*time.Second)
	for cpuTime(t)-start < 500*time.Millisecond {
		require.True(t, time.Now().Before(deadline), "the host never started matching")
		time.Sleep(50 * time.Millisecond)
	}
	cancelled, cpu := time.Now(), cpuTime(t)
	r.Cancel("enough")
	entry, err := r.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, history.StateCancelled, entry.State, "%s\n%s", entry.Reason, entry.Output)
	ended, spent := time.Since(cancelled), cpuTime(t)-cpu
	after := busy(time.Second)
	t.Logf("the run ended %v after its cancel, the host using %v of CPU meanwhile; then %.0f%% of a core", ended, spent, 100*after)
	// The cancel's grace for the script (2 s), not the 5 s the run's end
	// waits for host calls under way.
	require.Less(t, ended, 4*time.Second, "the host call held the run's end")
	require.Less(t, after, 0.15, "the host still matches after the run ended")
}
