package runner_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/internal/testenv"
)

// framesSite serves a shop page on 127.0.0.1 holding a payment frame on
// localhost: another site, another renderer.
func framesSite(t *testing.T) (shop string) {
	t.Helper()
	mux := http.NewServeMux()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: testenv.LoopbackOnly(mux)}}
	srv.Start()
	t.Cleanup(srv.Close)
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	page("/shop", fmt.Sprintf(`<title>Shop</title><label>Full name <input></label>
<iframe name=checkout src="%s/pay"></iframe>`, other))
	page("/pay", `<label>Card number <input id=card></label>
<button onclick="document.getElementById('out').textContent = 'paid ' + document.getElementById('card').value">Pay</button>
<p id=out>unpaid</p>`)
	return srv.URL + "/shop"
}

// A script fills and clicks in a cross-site frame, and with sites= only
// the frame's site is acted on.
func TestScriptOperatesFrames(t *testing.T) {
	t.Parallel() // see parallel_test.go
	shop := framesSite(t)
	// The shop is the host's own page; the second script's sites= names
	// only the frame's site.
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(strings.TrimSuffix(shop, "/shop"))}})
	entry := e.run(t, "frames.ts", `// @permissions browser forms sites=localhost,127.0.0.1
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+shop+`");
await tab.fill({ label: "Card number", frame: "checkout" }, "4242");
await tab.click({ role: "button", name: "Pay" });
await context.result({ out: await tab.text({ selector: "#out" }), count: await tab.count({ selector: "input" }) });
`)
	var res struct {
		Out   string
		Count int
	}
	result(t, entry, &res)
	assert.Equal(t, "paid 4242", res.Out)
	assert.Equal(t, 2, res.Count)

	entry = e.run(t, "frames-sites.ts", `// @permissions browser forms sites=localhost
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+shop+`");
await tab.fill({ label: "Card number" }, "5555");
let name = "";
try { await tab.fill({ label: "Full name" }, "Ada", { timeout: 500 }); } catch (err) { name = (err as { code: string }).code; }
await context.result({ value: await tab.value({ selector: "#card" }), name });
`)
	var res2 struct{ Value, Name string }
	result(t, entry, &res2)
	assert.Equal(t, "5555", res2.Value)
	assert.Equal(t, "not_found", res2.Name, "the shop's own page is not on sites=")
}

// Objects keep their key order from the page to the script, and through
// the script's stored config.
func TestObjectKeyOrderSurvivesTheHost(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnv(t)
	entry := e.run(t, "order.ts", `// @permissions browser page-js
import { config, context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const row = await tab.evaluate((arg) => ({ zeta: 1, alpha: { y: 2, b: 3 }, mid: arg }), { k2: 1, k1: 2 });
await config.set("row", { z: 1, a: [{ q: 1, c: 2 }], m: 3 });
const stored = await config.get("row");
await context.result({ page: JSON.stringify(row), stored: JSON.stringify(stored) });
`)
	var res struct{ Page, Stored string }
	result(t, entry, &res)
	assert.Equal(t, `{"zeta":1,"alpha":{"y":2,"b":3},"mid":{"k2":1,"k1":2}}`, res.Page)
	assert.Equal(t, `{"z":1,"a":[{"q":1,"c":2}],"m":3}`, res.Stored)
}
