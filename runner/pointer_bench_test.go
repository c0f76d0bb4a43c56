package runner_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
)

// BenchmarkScriptPointerVerbs is cdp's BenchmarkPointerVerbs as a script
// meets it: tab.hover, tab.dblclick and tab.dragTo, and tab.texts and
// tab.table over a 1,000 x 5 table, each through Deno, the bridge and the
// host, against Playwright's locator.hover, dblclick, dragTo and
// allTextContents (bench/browser/pointer.mjs) on the same page with the
// same Chromium binary and flags. Targets: hover, dblclick and dragTo p50
// ratio ≤ 1.0; texts and table ≤ 1.5.
func BenchmarkScriptPointerVerbs(b *testing.B) {
	peers := testenv.BrowserPeers(b, "playwright-core")
	srv := testenv.HTMLSite(testenv.PointerBenchPage())
	b.Cleanup(srv.Close)
	e := newBrowserEnvWith(b, envOptions{site: srv})
	pageURL := srv.URL + "/pointer"
	const n = 30
	verbs := []string{"hover", "dblclick", "dragTo", "texts", "table"}
	ours := map[string][]float64{}
	theirs := map[string][]float64{}
	for b.Loop() {
		entry := e.run(b, "pointer-bench.ts", fmt.Sprintf(`// @permissions browser forms
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto(%q);
const out: Record<string, number[]> = {};
const time = async (name: string, f: (i: number) => Promise<unknown>) => {
  out[name] = [];
  for (let i = 0; i < %d; i++) {
    const t = performance.now();
    await f(i);
    out[name].push((performance.now() - t) * 1000);
  }
};
await time("hover", (i) => tab.hover({ selector: i %% 2 ? "#h1" : "#h2" }));
await time("dblclick", () => tab.dblclick({ selector: "#dbl" }));
await time("dragTo", () => tab.dragTo({ selector: "#drag li", nth: 0 }, { selector: "#drag li", nth: -1 }));
await time("texts", async () => { if ((await tab.texts({ selector: "#grid td" })).length !== 5000) throw new Error("cells"); });
await time("table", async () => { if ((await tab.table({ selector: "#grid" })).rows.length !== 1000) throw new Error("rows"); });
await context.result(out);
`, pageURL, n))
		if entry.State != history.StateSucceeded {
			b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
		}
		var got map[string][]float64
		if err := json.Unmarshal(entry.Result, &got); err != nil {
			b.Fatal(err)
		}
		for k, v := range got {
			ours[k] = append(ours[k], v...)
		}
		var peer map[string][]float64
		runPeer(b, peers, "pointer.mjs", pageURL, n, &peer)
		for k, v := range peer {
			theirs[k] = append(theirs[k], v...)
		}
	}
	for _, name := range verbs {
		peer := name
		if name == "table" {
			peer = "texts" // allTextContents of the same cells
		}
		b.ReportMetric(p50(ours[name]), name+"-p50-µs")
		b.ReportMetric(p50(ours[name])/p50(theirs[peer]), name+"-ratio")
	}
}

// runPeer runs script of bench/browser on pageURL for n rounds, with the
// host's browser flags and then extra arguments, and decodes what it
// prints into out.
func runPeer(b *testing.B, peers, script, pageURL string, n int, out any, extra ...string) {
	flags := launch.DefaultFlags()
	if os.Geteuid() == 0 {
		flags = append(flags, "--no-sandbox")
	}
	flagsJSON, _ := json.Marshal(flags)
	args := append([]string{filepath.Join(peers, script), testenv.Chromium(b), pageURL, fmt.Sprint(n), string(flagsJSON)}, extra...)
	cmd := exec.Command("node", args...)
	cmd.Dir = peers
	got, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v", script, err)
	}
	if err := json.Unmarshal(got, out); err != nil {
		b.Fatalf("%s: %v: %s", script, err, got)
	}
}
