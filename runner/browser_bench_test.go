package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// BenchmarkBrowserPeers compares, on the same page, a script's
// tab.evaluate (Deno → host → Chromium) with puppeteer-core's page.evaluate
// (Node → Chromium), and a script's tab.fill with Playwright's
// locator.fill. Each drives a Chromium it launched itself over a pipe, with
// the same flags: ours has no endpoint to share, and a peer on a pipe is
// the fair comparison. Targets: evaluate p50 ratio ≤ 1.5, fill p50 ratio ≤
// 2. The peers live in bench/browser (npm install there first;
// bench/browser/run does).
func BenchmarkBrowserPeers(b *testing.B) {
	peers := testenv.BrowserPeers(b, "puppeteer-core", "playwright-core")
	e := newBrowserEnv(b)
	pageURL, tab := e.peerPage(b)
	tab.Detach(context.Background())

	// Rounds alternate who goes first and the samples of all rounds are
	// pooled: on a two-core machine one long run of either side can land in
	// a slow spell of the scheduler that the other side never sees.
	const rounds, n = 4, 100
	var ours, theirs struct{ Evaluate, Fill []float64 }
	for b.Loop() {
		for r := 0; r < rounds; r++ {
			if r%2 == 0 {
				e.benchOurs(b, n, &ours.Evaluate, &ours.Fill)
				benchPeers(b, peers, pageURL, n, &theirs.Evaluate, &theirs.Fill)
			} else {
				benchPeers(b, peers, pageURL, n, &theirs.Evaluate, &theirs.Fill)
				e.benchOurs(b, n, &ours.Evaluate, &ours.Fill)
			}
		}
	}
	b.ReportMetric(p50(ours.Evaluate), "evaluate-p50-µs")
	b.ReportMetric(p50(theirs.Evaluate), "puppeteer-p50-µs")
	b.ReportMetric(p50(ours.Evaluate)/p50(theirs.Evaluate), "evaluate-ratio")
	b.ReportMetric(p50(ours.Fill), "fill-p50-µs")
	b.ReportMetric(p50(theirs.Fill), "playwright-p50-µs")
	b.ReportMetric(p50(ours.Fill)/p50(theirs.Fill), "fill-ratio")
}

// benchOurs runs n evaluates and n fills from a script and adds their
// latencies in microseconds.
func (e *browserEnv) benchOurs(b *testing.B, n int, evaluate, fill *[]float64) {
	entry := e.run(b, "bench.ts", fmt.Sprintf(`// @permissions browser forms page-js
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const evaluate: number[] = [], fill: number[] = [];
for (let i = 0; i < %d; i++) {
  const t = performance.now();
  await tab.evaluate((a: number, b: number) => a + b, i, 1);
  evaluate.push((performance.now() - t) * 1000);
}
for (let i = 0; i < %d; i++) {
  const t = performance.now();
  await tab.fill({ label: "Card holder" }, "Ada Lovelace " + i);
  fill.push((performance.now() - t) * 1000);
}
await context.result({ evaluate, fill });
`, n, n))
	if entry.State != history.StateSucceeded {
		b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
	}
	var got struct{ Evaluate, Fill []float64 }
	if err := json.Unmarshal(entry.Result, &got); err != nil {
		b.Fatal(err)
	}
	*evaluate = append(*evaluate, got.Evaluate...)
	*fill = append(*fill, got.Fill...)
}

// benchPeers runs puppeteer's page.evaluate and Playwright's locator.fill
// n times each on their own browser and adds their latencies.
func benchPeers(b *testing.B, peers, pageURL string, n int, evaluate, fill *[]float64) {
	var got struct{ Evaluate, Fill []float64 }
	runPeer(b, peers, "peers.mjs", pageURL, n, &got)
	*evaluate = append(*evaluate, got.Evaluate...)
	*fill = append(*fill, got.Fill...)
}

// peerPage shows the form page, the peers' page, in the active tab, and
// returns its address and the tab, attached for the caller to detach.
func (e *browserEnv) peerPage(b *testing.B) (string, *cdp.Tab) {
	ctx := context.Background()
	active, err := e.tabs.Active(ctx, runner.RunInfo{})
	if err != nil {
		b.Fatal(err)
	}
	pageURL := e.site.URL + "/form"
	tab, err := e.tabs.Browser().Attach(ctx, active.ID)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tab.Goto(ctx, pageURL, "load"); err != nil {
		b.Fatal(err)
	}
	return pageURL, tab
}

// p50 is the median of v, which it leaves as it is.
func p50(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
