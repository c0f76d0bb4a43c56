package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
)

// BenchmarkEvaluateShare splits a script's tab.evaluate into where its
// time goes, against puppeteer-core's page.evaluate on the same page
// (bench/browser/peers.mjs), for a number result and a small object:
//
//   - script: the call as the script times it (SDK, bridge, host, browser);
//   - host: the host's share, from the call's start to its answer, as the
//     run's trace records it;
//   - cdp: cdp.Tab.Evaluate called from Go on the same tab, back to back;
//   - cdpidle: the same with the browser left idle for idleGap between
//     calls, as a script's calls leave it while the SDK and the bridge
//     work.
//
// script − host is the SDK's and the bridge's share. host − cdpidle is
// the facade's (gate, trace, decoding the result); cdpidle − cdp is what
// the browser's round trip costs more once its threads went idle, which
// the host pays on every script call and a back-to-back loop does not.
// Target: script p50 ratio to puppeteer ≤ 1.0 for a number.
func BenchmarkEvaluateShare(b *testing.B) {
	peers := testenv.BrowserPeers(b, "puppeteer-core")
	e := newBrowserEnv(b)
	pageURL, tab := e.peerPage(b)
	defer tab.Detach(context.Background())
	const rounds, n = 4, 100
	kinds := []string{"number", "object"}
	times := map[string][]float64{} // "<side>-<kind>" → µs
	add := func(side string, got map[string][]float64) {
		for _, k := range kinds {
			times[side+"-"+k] = append(times[side+"-"+k], got[k]...)
		}
	}
	for b.Loop() {
		for r := 0; r < rounds; r++ {
			sides := []func(){
				func() {
					script, host := e.benchEvaluate(b, n)
					add("script", script)
					add("host", host)
				},
				func() { add("cdp", benchCDPEvaluate(b, tab, n, 0)) },
				func() { add("cdpidle", benchCDPEvaluate(b, tab, n, idleGap)) },
				func() {
					var got struct{ Evaluate, EvaluateObject []float64 }
					runPeer(b, peers, "peers.mjs", pageURL, n, &got, "evaluate")
					add("puppeteer", map[string][]float64{"number": got.Evaluate, "object": got.EvaluateObject})
				},
			}
			for i := range sides {
				sides[(i+r)%len(sides)]() // each side leads in turn
			}
		}
	}
	for _, k := range kinds {
		peer := p50(times["puppeteer-"+k])
		b.ReportMetric(peer, k+"-puppeteer-p50-µs")
		for _, side := range []string{"script", "host", "cdp", "cdpidle"} {
			b.ReportMetric(p50(times[side+"-"+k]), k+"-"+side+"-p50-µs")
		}
		b.ReportMetric(p50(times["script-"+k])/peer, k+"-script-ratio")
		b.ReportMetric(p50(times["cdp-"+k])/peer, k+"-cdp-ratio")
	}
}

// benchEvaluate runs n evaluates of each kind from a script, as the peer
// does, and returns their latencies as the script saw them and as the
// run's trace recorded the host's share, in microseconds.
func (e *browserEnv) benchEvaluate(b *testing.B, n int) (script, host map[string][]float64) {
	entry := e.run(b, "evaluate-bench.ts", fmt.Sprintf(`// @permissions browser page-js
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const number: number[] = [], object: number[] = [];
for (let i = 0; i < %d; i++) {
  const t = performance.now();
  await tab.evaluate((a: number, b: number) => a + b, i, 1);
  number.push((performance.now() - t) * 1000);
}
for (let i = 0; i < %[1]d; i++) {
  const t = performance.now();
  await tab.evaluate((a: number, b: string) => ({ a, b, c: [a, b] }), i, "x");
  object.push((performance.now() - t) * 1000);
}
await context.result({ number, object });
`, n))
	if entry.State != history.StateSucceeded {
		b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
	}
	if err := json.Unmarshal(entry.Result, &script); err != nil {
		b.Fatal(err)
	}
	tr, err := e.m.Trace(entry.ID)
	if err != nil {
		b.Fatal(err)
	}
	host = map[string][]float64{}
	i := 0
	for _, c := range tr.Calls {
		if c.Method != "tab.evaluate" {
			continue
		}
		k := kinds(i < n)
		host[k] = append(host[k], float64(c.Duration.Microseconds()))
		i++
	}
	if i != 2*n {
		b.Fatalf("the trace has %d evaluate calls, want %d", i, 2*n)
	}
	return script, host
}

// kinds names the result kind of the first loop (number) or the second.
func kinds(first bool) string {
	if first {
		return "number"
	}
	return "object"
}

// idleGap is about the time a script's evaluate leaves the browser idle
// between its round trips: the SDK's and the bridge's share, both ways.
const idleGap = 500 * time.Microsecond

// benchCDPEvaluate runs n evaluates of each kind with cdp.Tab.Evaluate,
// as the peer does, gap apart, and returns their latencies in
// microseconds.
func benchCDPEvaluate(b *testing.B, tab *cdp.Tab, n int, gap time.Duration) map[string][]float64 {
	ctx := context.Background()
	out := map[string][]float64{}
	for _, c := range []struct {
		kind, fn string
		arg      any
	}{
		{"number", "(a, b) => a + b", 1},
		{"object", "(a, b) => ({ a, b, c: [a, b] })", "x"},
	} {
		for i := 0; i < n; i++ {
			if gap > 0 {
				time.Sleep(gap)
			}
			t := time.Now()
			if _, err := tab.Evaluate(ctx, c.fn, i, c.arg); err != nil {
				b.Fatal(err)
			}
			out[c.kind] = append(out[c.kind], float64(time.Since(t).Microseconds()))
		}
	}
	return out
}
