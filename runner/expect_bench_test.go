package runner_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tranquil/automation/history"
)

// BenchmarkExpectVsRead compares, from a real script (deno, the capnweb
// bridge, Chromium), an expectation that holds at once,
// tab.expect(target).toHaveText(…), with what a script would do without
// one: tab.text(target), then compare. The target is a CSS selector, the
// cheapest lookup, so the bridge's share of each call is the largest. The
// two alternate call by call in
// one run, each going first half the time, so a slow spell of the
// machine falls on both. Target: p50 ratio ≤ 1.2.
func BenchmarkExpectVsRead(b *testing.B) {
	e := newBrowserEnvWith(b, envOptions{site: expectSite(b)})
	const n = 300
	var read, expect []float64
	for b.Loop() {
		entry := e.run(b, "bench-expect.ts", fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("%s/changing");
await tab.expect({ selector: "#late" }).toHaveText("arrived"); // the page has settled
const target = { selector: "[role=status]" } as const;
const read: number[] = [], expect: number[] = [];
const byRead = async () => {
  const t = performance.now();
  if (await tab.text(target) !== "Saved") throw new Error("not saved");
  read.push((performance.now() - t) * 1000);
};
const byExpect = async () => {
  const t = performance.now();
  await tab.expect(target).toHaveText("Saved");
  expect.push((performance.now() - t) * 1000);
};
for (let i = 0; i < %d; i++) {
  if (i %% 2 === 0) { await byRead(); await byExpect(); }
  else { await byExpect(); await byRead(); }
}
await context.result({ read, expect });
`, e.site.URL, n))
		if entry.State != history.StateSucceeded {
			b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
		}
		var got struct{ Read, Expect []float64 }
		if err := json.Unmarshal(entry.Result, &got); err != nil {
			b.Fatal(err)
		}
		read = append(read, got.Read...)
		expect = append(expect, got.Expect...)
	}
	b.ReportMetric(p50(read), "read-p50-µs")
	b.ReportMetric(p50(expect), "expect-p50-µs")
	b.ReportMetric(p50(expect)/p50(read), "p50-ratio")
}
