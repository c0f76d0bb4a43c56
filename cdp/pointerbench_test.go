package cdp

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

// pointerBenchPage has two hover targets, a double-click target, an HTML
// drag and drop list that counts its drops, and a table of 1,000 rows of
// 5 cells.
func pointerBenchPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>pointer bench</title>
<div id=h1 style="width:100px;height:30px">one</div><div id=h2 style="width:100px;height:30px">two</div>
<button id=dbl>Twice</button>
<ul id=drag><li draggable=true>A</li><li draggable=true>B</li><li draggable=true>C</li></ul>
<script>
window.drops = 0;
const d = document.getElementById("drag");
d.addEventListener("dragstart", (e) => e.dataTransfer.setData("text/plain", e.target.textContent));
d.addEventListener("dragover", (e) => e.preventDefault());
d.addEventListener("drop", (e) => { e.preventDefault(); drops++; });
</script>
<table id=grid><thead><tr><th>Order</th><th>Customer</th><th>Total</th><th>Status</th><th>Date</th></tr></thead><tbody>`)
	for i := range 1000 {
		fmt.Fprintf(&b, `<tr><td>#%d</td><td>Customer %d</td><td>%d.00</td><td>paid</td><td>2024-03-%02d</td></tr>`, 1000+i, i, i, i%28+1)
	}
	b.WriteString(`</tbody></table>`)
	return b.String()
}

// BenchmarkPointerVerbs measures Tab.Hover, Tab.DblClick and Tab.DragTo
// (HTML drag and drop) against Playwright's locator.hover, dblclick and
// dragTo, and Tab.Texts and Tab.Table over a 1,000 x 5 table against
// allTextContents of its cells, on the same page with the same Chromium
// binary and flags. Targets: hover, dblclick and dragTo p50 ratio ≤ 1.0;
// texts and table ≤ 1.5. Playwright comes from bench/browser.
func BenchmarkPointerVerbs(b *testing.B) {
	peers := testenv.BrowserPeers(b, "playwright-core")
	chromium, err := testenv.LookChromium()
	if err != nil {
		b.Fatalf("chromium: %v (install with: %s)", err, testenv.ChromiumInstall)
	}
	ctx := b.Context()
	page := serve("/bench-pointer", pointerBenchPage())
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
	for b.Loop() {
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
		flags, _ := json.Marshal(append(browserproc.DefaultFlags(), browserproc.SandboxArgs()...))
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
	if err != nil || string(raw) != fmt.Sprint(n) {
		b.Fatalf("the page saw %s drops of %d (%v)", raw, n, err)
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
