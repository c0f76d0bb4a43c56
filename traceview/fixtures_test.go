package traceview_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
)

// The addresses below are only text in a trace: nothing dials them.
const (
	shop     = "https://shop.example.test"
	longPath = shop + "/checkout/confirm-and-pay-with-the-saved-card-of-the-account-holder/step-three-of-four/review-everything-once-more"
	// checkoutErr is the run's failure, as the call, the step and the
	// run's entry each report it.
	checkoutErr = `no element matches role button "Place order" within 5.0 s`
)

// sdkAccesses are what the SDK asks deno for on every run: its settings,
// its files, the bridge.
func sdkAccesses(t0 time.Time) []trace.Access {
	var as []trace.Access
	for _, v := range []string{"TRANQUIL_ENTRY", "TRANQUIL_RPC_URL", "TRANQUIL_RPC_TOKEN", "TRANQUIL_RUN_ID", "TRANQUIL_SCRIPT_DIR"} {
		as = append(as, trace.Access{Kind: "env", Value: v, Allowed: true, Count: 1, First: t0, Last: t0})
	}
	as = append(as,
		trace.Access{Kind: "read", Value: "/home/u/.local/share/app/sdk/sdk-0123456789abcdef/main.ts", Allowed: true, Count: 3, First: t0, Last: t0},
		trace.Access{Kind: "net", Value: "127.0.0.1:41234", Allowed: true, Count: 1, First: t0.Add(20 * time.Millisecond), Last: t0.Add(20 * time.Millisecond)})
	return as
}

// fixtureScripts are the scripts of layoutRuns, by path from their
// folder: the lines their calls name.
var fixtureScripts = map[string]string{
	"reorder-groceries.ts": `import { clipboard, step, tabs } from "tranquil/automation";
const tab = await tabs.active();
await step.do("open the cart", async () => {
  await tab.goto("https://shop.example.test/cart");
  await waitForCart(tab);
  await tab.fill({ label: "Coupon code" }, code);
});
await clipboard.writeText("done <b>");
`,
	"lib/cart helpers.ts": `export async function waitForCart(tab: Tab) {
  await tab.waitForNavigation();
}
`,
	strings.Repeat("checkout-", 8) + "flow.ts": `const tab = await tabs.active();
await tab.goto(longPath);
await tab.click({ role: "button", name: "Place order" });
`,
}

// tinyJPEG is a small grey JPEG, a page's screenshot.
var tinyJPEG = func() []byte {
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 64, 40))
	for i := range img.Pix {
		img.Pix[i] = 0xd0
	}
	if err := jpeg.Encode(&b, img, nil); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// withScripts writes the scripts of layoutRuns into dir and has the runs'
// entries name them there.
func withScripts(t testing.TB, src source) source {
	t.Helper()
	dir := t.TempDir()
	for name, text := range fixtureScripts {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	for i, e := range src.runs {
		src.runs[i].Script = filepath.Join(dir, filepath.Base(e.Script))
	}
	return src
}

// layoutRuns are four runs as a host keeps them: one that succeeded,
// one that failed, one cancelled, and one whose step passed on its
// second attempt.
func layoutRuns() source {
	t0 := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	code := 0
	src := source{traces: map[string]*trace.Trace{}}
	add := func(e history.Entry, tr *trace.Trace) {
		e.Start, tr.Start, tr.RunID = t0, t0, e.ID
		src.runs = append(src.runs, e)
		src.traces[e.ID] = tr
	}

	ok := &trace.Trace{
		Navigations: []trace.Navigation{{At: ms(400), Tab: "9F2C41D07A6B4E8C9D1E2F3A4B5C6D7E", Kind: "goto", URL: shop + "/cart"}},
		Calls: []trace.Call{
			{Seq: 1, Method: "tab.goto", Target: shop + "/cart", Tab: "9F2C41D07A6B4E8C9D1E2F3A4B5C6D7E", Page: shop + "/cart", Start: ms(400), Duration: 850 * time.Millisecond,
				File: "reorder-groceries.ts", Line: 4, Column: 11},
			{Seq: 2, Method: "tab.waitForNavigation", Tab: "9F2C41D07A6B4E8C9D1E2F3A4B5C6D7E", Page: shop + "/cart", Start: ms(1300), Duration: 2100 * time.Millisecond,
				File: "lib/cart%20helpers.ts", Line: 2, Column: 13},
			{Seq: 3, Method: "tab.fill", Target: `label "Coupon code"`, Tab: "9F2C41D07A6B4E8C9D1E2F3A4B5C6D7E", Page: shop + "/cart", Start: ms(3500), Duration: 40 * time.Millisecond,
				File: "reorder-groceries.ts", Line: 6, Column: 13},
			{Seq: 4, Method: "clipboard.writeText", Start: ms(11000), Duration: 3 * time.Millisecond, File: "reorder-groceries.ts", Line: 8, Column: 11},
		},
		Tabs: []trace.TabTitle{{Tab: "9F2C41D07A6B4E8C9D1E2F3A4B5C6D7E", Title: "Your cart · Shop"}},
		Shots: []trace.Shot{
			{Seq: 3, When: trace.Before, Image: tinyJPEG, ImageType: trace.JPEG},
			{Seq: 3, When: trace.After, Image: tinyJPEG, ImageType: trace.JPEG},
		},
		Steps: []trace.Step{
			{At: ms(350), Kind: "do", Name: "open the cart", Phase: "start", Attempt: 1, Fraction: -1},
			{At: ms(3600), Kind: "do", Name: "open the cart", Phase: "end", Attempt: 1, OK: true, Fraction: -1},
			{At: ms(5000), Kind: "progress", Name: "half way", Fraction: 0.5},
		},
		Console:  []trace.ConsoleLine{{At: ms(2000), Tab: "9F2C41D07A6B4E8C9D1E2F3A4B5C6D7E", Level: "log", Text: "cart loaded with 3 items"}},
		Accesses: append(sdkAccesses(t0), trace.Access{Kind: "read", Value: "/home/u/orders/in.csv", Allowed: true, Count: 2, First: ms(500), Last: ms(900)}),
	}
	add(history.Entry{ID: "run-ok", Script: "/home/u/scripts/reorder-groceries.ts", State: history.StateSucceeded, ExitCode: &code,
		Duration: 11400 * time.Millisecond, Result: json.RawMessage(`{"ordered":3,"total":"41.20","items":["milk","bread","<b>eggs</b>"]}`),
		Output: "reordered 3 items\n"}, ok)

	failed := &trace.Trace{
		Navigations: []trace.Navigation{{At: ms(200), Tab: "tab-a", Kind: "goto", URL: longPath}},
		Calls: []trace.Call{
			{Seq: 1, Method: "tab.goto", Target: longPath, Tab: "tab-a", Page: longPath, Start: ms(200), Duration: 1200 * time.Millisecond},
			{Seq: 2, Method: "tab.click", Target: `role button "Place order"`, Tab: "tab-a", Page: longPath, Start: ms(1500), Duration: 5 * time.Second, Code: "not_found", Error: checkoutErr,
				File: strings.Repeat("checkout-", 8) + "flow.ts", Line: 3, Column: 17},
		},
		Steps: []trace.Step{
			{At: ms(150), Kind: "do", Name: "place the order", Phase: "start", Attempt: 1, Fraction: -1},
			{At: ms(6600), Kind: "do", Name: "place the order", Phase: "end", Attempt: 1, Error: "Error: " + checkoutErr, Fraction: -1},
		},
		Accesses: append(sdkAccesses(t0), trace.Access{Kind: "net", Value: "api.example.test:443", Allowed: false, Count: 1, First: ms(700), Last: ms(700)}),
	}
	code1 := 1
	add(history.Entry{ID: "run-failed", Script: "/home/u/scripts/" + strings.Repeat("checkout-", 8) + "flow.ts", State: history.StateFailed, ExitCode: &code1,
		Duration: 6700 * time.Millisecond, Reason: "the script threw: Error: " + checkoutErr, FirstError: "Error: " + checkoutErr,
		Output: "Error: " + checkoutErr + "\n    at main (file:///home/u/scripts/checkout.ts:12:9)\n"}, failed)

	cancelled := &trace.Trace{
		Calls: []trace.Call{{Seq: 1, Method: "ui.confirm", Start: ms(100), Duration: 124 * time.Second, Code: "cancelled", Error: "the run was cancelled"}},
		Steps: []trace.Step{{At: ms(90), Kind: "waitForEvent", Name: "approval", Phase: "start", Attempt: 1, Fraction: -1}},
	}
	add(history.Entry{ID: "run-cancelled", Script: "/home/u/scripts/approve.ts", State: history.StateCancelled,
		Duration: 125 * time.Second, Reason: "cancelled by the user"}, cancelled)

	retried := &trace.Trace{
		Navigations: []trace.Navigation{{At: ms(100), Tab: "tab-b", Kind: "goto", URL: "http://127.0.0.1:8080/form"}},
		Calls: []trace.Call{
			{Seq: 1, Method: "tab.click", Target: `role button "Submit"`, Tab: "tab-b", Page: "http://127.0.0.1:8080/form", Start: ms(300), Duration: 2 * time.Second, Code: "timeout", Error: "timed out after 2.0 s waiting for the button to be enabled"},
			{Seq: 2, Method: "tab.click", Target: `role button "Submit"`, Tab: "tab-b", Page: "http://127.0.0.1:8080/form", Start: ms(3400), Duration: 90 * time.Millisecond},
		},
		Steps: []trace.Step{
			{At: ms(250), Kind: "do", Name: "submit the form", Phase: "start", Attempt: 1, Fraction: -1},
			{At: ms(2350), Kind: "do", Name: "submit the form", Phase: "retry", Attempt: 2, Error: "timed out after 2.0 s waiting for the button to be enabled", Fraction: -1},
			{At: ms(3500), Kind: "do", Name: "submit the form", Phase: "end", Attempt: 2, OK: true, Fraction: -1},
		},
		Failures: []trace.Failure{{Seq: 1, Outline: "main\n  form \"Order\"\n    button \"Submit\" disabled", Note: "no screenshot: the page did not paint in time"}},
	}
	add(history.Entry{ID: "run-retried", Script: "/home/u/scripts/submit.ts", State: history.StateSucceeded, ExitCode: &code,
		Duration: 3600 * time.Millisecond}, retried)
	return src
}
