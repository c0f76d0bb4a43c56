package cdp

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/testenv"
)

// BenchmarkPointerVerbs measures Tab.Hover, Tab.DblClick and Tab.DragTo
// (HTML drag and drop) against Playwright's locator.hover, dblclick and
// dragTo, and Tab.Texts and Tab.Table over a 1,000 x 5 table against
// allTextContents of its cells, on the same page with the same Chromium
// binary and flags. Targets: hover, dblclick and dragTo p50 ratio ≤ 1.0;
// texts and table ≤ 1.5. Playwright comes from bench/browser.
func BenchmarkPointerVerbs(b *testing.B) {
	peers := testenv.BrowserPeers(b, "playwright-core")
	chromium := testenv.Chromium(b)
	ctx := b.Context()
	page := serve("/bench-pointer", testenv.PointerBenchPage())
	tab, err := sharedConn.NewTabWith(ctx, page, TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close(ctx)
	const n = 30
	ours := map[string][]float64{}
	var theirs map[string][]float64
	timed := func(name string, f func(i int) error) {
		for i := range n {
			t0 := time.Now()
			if err := f(i); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			ours[name] = append(ours[name], float64(time.Since(t0).Microseconds()))
		}
	}
	loops := 0
	for b.Loop() {
		loops++
		timed("hover", func(i int) error {
			return tab.Hover(ctx, Locator{Selector: []string{"#h2", "#h1"}[i%2]}, ClickOptions{})
		})
		timed("dblclick", func(int) error { return tab.DblClick(ctx, Locator{Selector: "#dbl"}, ClickOptions{}) })
		timed("dragTo", func(int) error {
			return tab.DragTo(ctx, Locator{Selector: "#drag li", Nth: ptr(0)}, Locator{Selector: "#drag li", Nth: ptr(-1)}, FormOptions{})
		})
		timed("texts", func(int) error {
			v, err := tab.Texts(ctx, Locator{Selector: "#grid td"})
			if err == nil && len(v) != 5000 {
				err = fmt.Errorf("read %d cells", len(v))
			}
			return err
		})
		timed("table", func(int) error {
			tb, err := tab.Table(ctx, Locator{Selector: "#grid"})
			if err == nil && (len(tb.Rows) != 1000 || len(tb.Headers) != 5) {
				err = fmt.Errorf("read %d rows", len(tb.Rows))
			}
			return err
		})
		flags := peerFlags()
		cmd := exec.Command("node", filepath.Join(peers, "pointer.mjs"), chromium, page, fmt.Sprint(n), string(flags))
		cmd.Dir = peers
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("playwright: %v", err)
		}
		if err := json.Unmarshal(out, &theirs); err != nil {
			b.Fatalf("playwright: %v: %s", err, out)
		}
	}
	raw, err := tab.Evaluate(ctx, "() => drops")
	if err != nil || string(raw) != fmt.Sprint(n*loops) {
		b.Fatalf("the page saw %s drops of %d (%v)", raw, n*loops, err)
	}
	for _, name := range []string{"hover", "dblclick", "dragTo", "texts", "table"} {
		peer := name
		if name == "table" {
			peer = "texts" // allTextContents of the same cells
		}
		b.ReportMetric(median(ours[name]), name+"-p50-µs")
		b.ReportMetric(median(theirs[peer]), name+"-playwright-p50-µs")
		b.ReportMetric(median(ours[name])/median(theirs[peer]), name+"-ratio")
	}
}
