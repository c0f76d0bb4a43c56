package runner_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/runner"
)

// BenchmarkTraceFill measures what the trace costs a script's tab.fill:
// two managers on one browser, one tracing and one not (Config.NoTrace),
// run the same script in turn, each going first half the time, so a slow
// spell of the machine falls on both. Target: p50 ratio ≤ 1.1. It also
// reports the stored trace's bytes per call.
func BenchmarkTraceFill(b *testing.B) {
	benchTrace(b, `await tab.fill({ label: "Secret word" }, "Ada Lovelace " + i);`)
}

// BenchmarkTraceCall does the same for the cheapest tab call, tab.url: a
// round trip to the host and one to the page, where the trace's share is
// largest. Target: p50 ratio ≤ 1.1.
func BenchmarkTraceCall(b *testing.B) {
	benchTrace(b, `await tab.url();`)
}

// BenchmarkTraceHostCall does the same for a call that never reaches a
// browser, config.get: a bare round trip to the host. Target: p50 ratio
// ≤ 1.1.
func BenchmarkTraceHostCall(b *testing.B) {
	benchTrace(b, `await config.get("k");`)
}

// benchTrace times call, a statement of a script that may use tab and i,
// in scripts run by a manager that traces and by one that does not.
func benchTrace(b *testing.B, call string) {
	on := newBrowserEnvWith(b, envOptions{site: traceSite(b)})
	off := newBrowserEnvWith(b, envOptions{site: on.site, tabs: on.tabs.Tabs, config: func(c *runner.Config) { c.NoTrace = true }})
	const n = 150
	script := fmt.Sprintf(`// @permissions browser forms
import { config, context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("%s/signup");
const took: number[] = [];
for (let i = 0; i < %d; i++) {
  const t = performance.now();
  %s
  took.push((performance.now() - t) * 1000);
}
await context.result({ took });
`, on.site.URL, n, call)
	var withTrace, without []float64
	var bytes, calls int
	run := func(e *browserEnv, into *[]float64) history.Entry {
		entry := e.run(b, "bench-trace.ts", script)
		if entry.State != history.StateSucceeded {
			b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
		}
		var got struct{ Took []float64 }
		if err := json.Unmarshal(entry.Result, &got); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, got.Took...)
		return entry
	}
	i := 0
	for b.Loop() {
		var untraced history.Entry
		if i%2 == 1 {
			untraced = run(off, &without)
		}
		entry := run(on, &withTrace)
		if i%2 == 0 {
			untraced = run(off, &without)
		}
		i++
		raw, err := on.m.History().Trace(entry.ID)
		if err != nil {
			b.Fatal(err)
		}
		tr, err := on.m.Trace(entry.ID)
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Calls) < n {
			b.Fatalf("the trace holds %d calls, want at least %d", len(tr.Calls), n)
		}
		bytes += len(raw)
		calls += len(tr.Calls)
		if _, err := off.m.Trace(untraced.ID); !errors.Is(err, history.ErrNoTrace) {
			b.Fatalf("the manager without tracing: %v, want ErrNoTrace", err)
		}
	}
	p50 := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	b.ReportMetric(p50(withTrace), "traced-p50-µs")
	b.ReportMetric(p50(without), "untraced-p50-µs")
	b.ReportMetric(p50(withTrace)/p50(without), "p50-ratio")
	b.ReportMetric(float64(bytes)/float64(calls), "trace-bytes/call")
}
