package cdp

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// now"} on a page of about 10,000 elements, with the check that no other
// element shares the role and name, against Playwright's getByRole of the
// same button (its elementHandle, which is strict too), on the same page in
// the same run. Target: p50 ratio ≤ 1.0. Playwright comes from
// bench/browser (its run installs it).
func BenchmarkRoleLookup(b *testing.B) {
	benchLookup(b, "/bench-big", bigPage(), Locator{Role: "button", Name: "Checkout now"}, "role", "target")
}

// ordersTable is a table of 1,000 orders, each row with its own "Edit"
// button; one row is Ada Lovelace's.
func ordersTable() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>orders</title><table><tr><th>Customer</th><th>Total</th><th>Actions</th></tr>`)
	for i := 0; i < 1000; i++ {
		name, id := fmt.Sprintf("Customer %d", i), ""
		if i == 700 {
			name, id = "Ada Lovelace", " id=target"
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%d.00</td><td><button%s>Edit</button> <a href="#%d">Open</a></td></tr>`, name, i, id, i)
	}
	b.WriteString(`</table>`)
	return b.String()
}

// BenchmarkScopedLookup measures resolving the "Edit" button of Ada
// Lovelace's row in a table of 1,000 orders ({role: "button", name:
// "Edit", within: {role: "row", name: "Ada Lovelace"}}) against
// Playwright's getByRole("row", …).getByRole("button", …) of the same
// button. Target: p50 ratio ≤ 1.0.
func BenchmarkScopedLookup(b *testing.B) {
	benchLookup(b, "/bench-orders", ordersTable(), Locator{Role: "button", Name: "Edit", Within: &Locator{Role: "row", Name: "Ada Lovelace"}}, "scoped", "target")
}

// benchLookup times Resolve of target on page against role.mjs's mode of
// Playwright, alternating the two.
func benchLookup(b *testing.B, path, html string, target Locator, mode, wantID string) {
	peers := testenv.BrowserPeers(b, "playwright-core")
	chromium := testenv.Chromium(b)
	ctx := b.Context()
	page := serve(path, html)
	tab, err := sharedConn.NewTabWith(ctx, page, TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close(ctx)
	const n = 50
	var ours, theirs []float64
	for b.Loop() {
		for i := 0; i < n; i++ {
			t0 := time.Now()
			el, err := tab.Resolve(ctx, target)
			if err != nil {
				b.Fatal(err)
			}
			ours = append(ours, float64(time.Since(t0).Microseconds()))
			if el.Element.ID != wantID {
				b.Fatalf("resolved %+v", el.Element)
			}
		}
		flags := peerFlags()
		cmd := exec.Command("node", filepath.Join(peers, "role.mjs"), chromium, page, fmt.Sprint(n), string(flags), mode)
		cmd.Dir = peers
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("playwright: %v", err)
		}
		var got struct{ Times []float64 }
		if err := json.Unmarshal(out, &got); err != nil {
			b.Fatalf("playwright: %v: %s", err, out)
		}
		theirs = append(theirs, got.Times...)
	}
	b.ReportMetric(median(ours), "ours-p50-µs")
	b.ReportMetric(median(theirs), "playwright-p50-µs")
	b.ReportMetric(median(ours)/median(theirs), "p50-ratio")
}
