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

// bigPage has about 10,000 elements: rows of text, links, labelled fields
// and buttons, one of them the target.
func bigPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>big</title><main>`)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, `<div class=row><span>Row %d</span><a href="#r%d">Open %d</a><label for=f%d>Field %d</label><input id=f%d>`+
			`<button>Action %d</button><p><em>note</em> <b>%d</b></p></div>`, i, i, i, i, i, i, i, i)
		if i == 900 {
			b.WriteString(`<button id=target>Checkout now</button>`)
		}
	}
	b.WriteString(`</main>`)
	return b.String()
}

// BenchmarkRoleLookup measures resolving {role: "button", name: "Checkout
// now"} on a page of about 10,000 elements against Playwright's getByRole
// of the same button (its elementHandle), on the same page in the same
// run. Target: p50 ratio ≤ 1.0. Playwright comes from bench/browser (its
// run installs it).
func BenchmarkRoleLookup(b *testing.B) {
	peers := testenv.BrowserPeers(b, "playwright-core")
	chromium, err := testenv.LookChromium()
	if err != nil {
		b.Fatalf("chromium: %v (install with: %s)", err, testenv.ChromiumInstall)
	}
	ctx := b.Context()
	page := serve("/bench-big", bigPage())
	tab, err := sharedConn.NewTabWith(ctx, page, TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close(ctx)
	const n = 50
	var ours, theirs []float64
	target := Locator{Role: "button", Name: "Checkout now"}
	for b.Loop() {
		for i := 0; i < n; i++ {
			t0 := time.Now()
			el, err := tab.Resolve(ctx, target)
			if err != nil {
				b.Fatal(err)
			}
			ours = append(ours, float64(time.Since(t0).Microseconds()))
			if el.Element.ID != "target" {
				b.Fatalf("resolved %+v", el.Element)
			}
		}
		flags, _ := json.Marshal(append(browserproc.DefaultFlags(), browserproc.SandboxArgs()...))
		cmd := exec.Command("node", filepath.Join(peers, "role.mjs"), chromium, page, fmt.Sprint(n), string(flags))
		cmd.Dir = peers
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("playwright: %v", err)
		}
		var got struct{ Role []float64 }
		if err := json.Unmarshal(out, &got); err != nil {
			b.Fatalf("playwright: %v: %s", err, out)
		}
		theirs = append(theirs, got.Role...)
	}
	b.ReportMetric(median(ours), "ours-p50-µs")
	b.ReportMetric(median(theirs), "playwright-p50-µs")
	b.ReportMetric(median(ours)/median(theirs), "p50-ratio")
}
