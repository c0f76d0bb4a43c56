package runner_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
	b.ReportMetric(p50(withTrace), "traced-p50-µs")
	b.ReportMetric(p50(without), "untraced-p50-µs")
	b.ReportMetric(p50(withTrace)/p50(without), "p50-ratio")
	b.ReportMetric(float64(bytes)/float64(calls), "trace-bytes/call")
}

// BenchmarkCallSiteCost measures what sending the call site costs a
// script's host call: one run makes the same call in blocks, taking turns
// with the site sent and with it turned off (the SDK's benchmark switch),
// for config.get (a bare round trip to the host, where the share is
// largest) and tab.url (one to the page too), from a function a few
// frames deep so the stack is a script's. Target: p50 ratio ≤ 1.05. It
// also reports the script process's CPU time per call in each arm (each
// block's deferred site formatting included), which a busy machine
// disturbs less than latency.
func BenchmarkCallSiteCost(b *testing.B) {
	e := newBrowserEnvWith(b, envOptions{site: traceSite(b)})
	const rounds, per = 40, 50
	script := fmt.Sprintf(`// @permissions browser forms
import { config, context, tabs } from "tranquil/automation";
import process from "node:process";
const tab = await tabs.active();
await tab.goto("%s/signup");
const off = Symbol.for("tranquil.noCallSites");
const g = globalThis as unknown as Record<symbol, boolean>;
const calls: Record<string, () => Promise<unknown>> = {
  "config.get": () => config.get("k"),
  "tab.url": () => tab.url(),
};
const nest = (d: number, f: () => Promise<unknown>): Promise<unknown> => d === 0 ? f() : nest(d - 1, f);
const took: Record<string, { on: number[]; off: number[]; cpuOn: number[]; cpuOff: number[] }> = {};
for (const [name, call] of Object.entries(calls)) {
  const t = took[name] = { on: [], off: [], cpuOn: [], cpuOff: [] };
  for (let i = 0; i < 100; i++) await call();
  for (let r = 0; r < %d; r++) {
    for (const sites of r %% 2 === 0 ? [true, false] : [false, true]) {
      g[off] = !sites;
      const cpu = process.cpuUsage();
      for (let i = 0; i < %d; i++) {
        const s = performance.now();
        await nest(5, call);
        (sites ? t.on : t.off).push((performance.now() - s) * 1000);
      }
      // The block's sites are formatted by now (a timer after the calls).
      await new Promise((resolve) => setTimeout(resolve, 5));
      const used = process.cpuUsage(cpu);
      (sites ? t.cpuOn : t.cpuOff).push(used.user + used.system);
    }
  }
}
g[off] = false;
await context.result(took);
`, e.site.URL, rounds, per)
	got := map[string]struct{ On, Off, CPUOn, CPUOff []float64 }{}
	for b.Loop() {
		entry := e.run(b, "bench-sites.ts", script)
		if entry.State != history.StateSucceeded {
			b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
		}
		var one map[string]struct{ On, Off, CPUOn, CPUOff []float64 }
		if err := json.Unmarshal(entry.Result, &one); err != nil {
			b.Fatal(err)
		}
		for k, v := range one {
			g := got[k]
			g.On, g.Off = append(g.On, v.On...), append(g.Off, v.Off...)
			g.CPUOn, g.CPUOff = append(g.CPUOn, v.CPUOn...), append(g.CPUOff, v.CPUOff...)
			got[k] = g
		}
		tr, err := e.m.Trace(entry.ID)
		if err != nil {
			b.Fatal(err)
		}
		var with int
		for _, c := range tr.Calls {
			if c.File != "" {
				with++
			}
		}
		if with == 0 || with == len(tr.Calls) {
			b.Fatalf("%d of %d calls have a site: the switch did not take", with, len(tr.Calls))
		}
	}
	mean := func(v []float64) float64 {
		var sum float64
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	for _, k := range []string{"config.get", "tab.url"} {
		on, off := p50(got[k].On), p50(got[k].Off)
		b.ReportMetric(on, k+"-site-p50-µs")
		b.ReportMetric(off, k+"-nosite-p50-µs")
		b.ReportMetric(on/off, k+"-p50-ratio")
		mOn, mOff := mean(got[k].On), mean(got[k].Off)
		// CPU per call: each block's median, over its calls.
		cpuOn, cpuOff := p50(got[k].CPUOn)/per, p50(got[k].CPUOff)/per
		b.ReportMetric(cpuOn-cpuOff, k+"-site-cpu-µs/call")
		b.Logf("call site cost: %s p50 %.0f µs with the site, %.0f µs without: %.3f× (target ≤ 1.05, met: %v); mean %.0f against %.0f µs: %.3f×; script CPU %.1f against %.1f µs a call: +%.1f µs",
			k, on, off, on/off, on/off <= 1.05, mOn, mOff, mOn/mOff, cpuOn, cpuOff, cpuOn-cpuOff)
	}
}
