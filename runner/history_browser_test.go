package runner_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tranquil/automation/internal/testenv"
)

// historySite serves /a, /b, a /missing page (404) and /later, which
// sends itself on to /b?from=later 300 ms after it loads.
func historySite(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<title>Missing</title>")
		case "/states":
			fmt.Fprint(w, `<title>States</title><button id=go disabled>Go</button><input id=name aria-label=Name>
<a id=link href="/old" class="nav">Link</a><p role=status>Saving…</p>
<script>setTimeout(() => {
  document.getElementById("go").disabled = false;
  document.getElementById("name").focus();
  document.getElementById("link").setAttribute("href", "/new");
  document.querySelector("[role=status]").textContent = "Saved";
  document.title = "Saved";
}, 300)</script>`)
		case "/later":
			fmt.Fprint(w, `<title>Later</title><script>setTimeout(() => { location.href = "/b?from=later" }, 300)</script>`)
		default:
			fmt.Fprintf(w, "<title>Page %s</title><h1>%s</h1>", r.URL.Path, r.URL.Path)
		}
	})
	srv := testenv.Site(mux)
	t.Cleanup(srv.Close)
	return srv
}

// A script moves through a tab's history, waits for addresses, and
// expects states, attributes and the page's title and address, turned
// round too, through the SDK: real deno, the real bridge, real Chromium.
func TestBrowserHistoryAndWaitForURL(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnvWith(t, envOptions{site: historySite(t)})
	entry := e.run(t, "history.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const out: Record<string, unknown> = {};
const outcome = async (f: () => Promise<unknown>) => {
  try { const v = await f(); return { ok: v === undefined ? true : v }; }
  catch (err) { const e = err as { code: string; message: string }; return { code: e.code, message: e.message }; }
};
const site = "`+e.site.URL+`";
await tab.goto(site + "/a");
await tab.goto(site + "/missing");
await tab.goto(site + "/b");
out.back = await outcome(() => tab.goBack());
out.back2 = await outcome(() => tab.goBack({ waitUntil: "domcontentloaded" }));
out.title = await outcome(() => tab.title());
out.forward = await outcome(() => tab.goForward());
out.reload = await outcome(() => tab.reload());
await tab.goto(site + "/b");
out.forwardNone = await outcome(() => tab.goForward());

await tab.goto(site + "/later");
out.glob = await outcome(() => tab.waitForURL("**/b?from=*"));
out.afterTitle = await outcome(() => tab.title());
out.regexp = await outcome(() => tab.waitForURL(/\/B\?FROM=later$/i, { timeout: 1000 }));
out.urlTimeout = await outcome(() => tab.waitForURL(site + "/never", { timeout: 300 }));
out.badPattern = await outcome(() => tab.waitForURL(/(?<=a)b/));

// Expectations of states, attributes and the page, and turned round.
await tab.goto(site + "/states");
const go = tab.expect({ selector: "#go" });
out.enabled = await outcome(() => go.toBeEnabled());
out.notDisabled = await outcome(() => go.not.toBeDisabled());
out.focused = await outcome(() => tab.expect({ label: "Name" }).toBeFocused());
out.editable = await outcome(() => tab.expect({ label: "Name" }).toBeEditable());
out.href = await outcome(() => tab.expect({ selector: "#link" }).toHaveAttribute("href", "/new"));
out.classed = await outcome(() => tab.expect({ selector: "#link" }).toHaveClass(/^nav$/));
out.notSaving = await outcome(() => tab.expect({ role: "status" }).not.toHaveText("Saving…"));
out.notVisible = await outcome(() => tab.expect({ selector: "#none" }).not.toBeVisible());
out.pageTitle = await outcome(() => tab.expectPage().toHaveTitle("Saved"));
out.url = await outcome(() => tab.expectPage().toHaveURL(/\/states$/));
out.notURL = await outcome(() => tab.expectPage().not.toHaveURL(site + "/login"));
out.notFails = await outcome(() => go.not.toBeEnabled({ timeout: 300 }));
out.pageFails = await outcome(() => tab.expectPage().not.toHaveTitle("Saved", { timeout: 300 }));
out.wrongPlace = await outcome(() => tab.expect({ selector: "#link" }).toBeEditable({ timeout: 10_000 })); // bad_target at the first look
await context.result(out);
`)
	type outcome struct {
		OK            any
		Code, Message string
	}
	var res map[string]outcome
	result(t, entry, &res)
	resp := func(status int, path string) map[string]any {
		return map[string]any{"status": float64(status), "url": e.site.URL + path}
	}
	assert.Equal(t, resp(404, "/missing"), res["back"].OK, "%+v", res["back"])
	assert.Equal(t, resp(200, "/a"), res["back2"].OK, "%+v", res["back2"])
	assert.Equal(t, "Page /a", res["title"].OK)
	assert.Equal(t, resp(404, "/missing"), res["forward"].OK, "%+v", res["forward"])
	assert.Equal(t, resp(404, "/missing"), res["reload"].OK, "%+v", res["reload"])
	assert.Nil(t, res["forwardNone"].OK, "no entry ahead: null, %+v", res["forwardNone"])
	assert.Empty(t, res["forwardNone"].Code)

	assert.Equal(t, true, res["glob"].OK, "%+v", res["glob"])
	assert.Equal(t, "Page /b", res["afterTitle"].OK)
	assert.Equal(t, true, res["regexp"].OK, "%+v", res["regexp"])
	assert.Equal(t, "timeout", res["urlTimeout"].Code, "%+v", res["urlTimeout"])
	assert.Contains(t, res["urlTimeout"].Message, "last seen: "+e.site.URL+"/b?from=later", "the address last seen")
	assert.NotContains(t, res["urlTimeout"].Message, "tab.waitForURL: tab.waitForURL")
	assert.Equal(t, "invalid", res["badPattern"].Code, "%+v", res["badPattern"])

	for _, k := range []string{"enabled", "notDisabled", "focused", "editable", "href", "classed", "notSaving", "notVisible", "pageTitle", "url", "notURL"} {
		assert.Equal(t, true, res[k].OK, "%s: %+v", k, res[k])
	}
	nf := res["notFails"]
	assert.Equal(t, "expectation_failed", nf.Code, "%+v", nf)
	assert.Contains(t, nf.Message, `expected selector "#go" not to be enabled, last seen: enabled (waited `)
	pf := res["pageFails"]
	assert.Equal(t, "expectation_failed", pf.Code, "%+v", pf)
	assert.Contains(t, pf.Message, `expected the page not to have title "Saved", last seen "Saved" (waited `)
	assert.Equal(t, "bad_target", res["wrongPlace"].Code, "%+v", res["wrongPlace"])

	acts := actions(entry)
	for _, a := range []string{"goBack:ok@127.0.0.1", "goForward:ok@127.0.0.1", "reload:ok@127.0.0.1", "waitForURL:ok@127.0.0.1", "waitForURL:timeout@127.0.0.1", "expect:ok@127.0.0.1", "expect:expectation_failed@127.0.0.1"} {
		assert.Contains(t, acts, a)
	}
}
