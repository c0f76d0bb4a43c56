package hosttest_test

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/internal/testenv"
)

// namedSitesScript probes what a script meets on named sites: sites=
// limits its page actions there as on any web site, an http:// address of
// a served name lands on its https page (Chromium's own upgrade), and the
// pages' CSP lets them reach the named sites and nothing else. It goes to
// no name the test does not serve: see Script.Sites for why.
const namedSitesScript = `// @permissions browser forms page-js sites=shop.example
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const code = (e: unknown) => (e as { code?: string }).code ?? String(e);
const out: Record<string, unknown> = {};
out.fillOnExample = await tab.fill({ label: "Quantity" }, "1").then(() => "ok", code);
out.plainHttp = await tab.goto("http://example.com/b").then((r) => r.status, code);
out.plainHttpLanded = await tab.url();
out.cart = (await tab.goto("https://shop.example/cart")).status;
out.fillOnShop = await tab.fill({ label: "Quantity" }, "2").then(() => "ok", code);
out.csp = await tab.evaluate(async () => {
  const blocked: string[] = [];
  document.addEventListener("securitypolicyviolation", (e) => blocked.push(e.blockedURI));
  const probe = (url: string) => fetch(url, { mode: "no-cors" }).then((r) => r.type, () => "failed");
  const example = await probe("https://example.com/a");
  const elsewhere = await probe("https://elsewhere.example/");
  await new Promise((r) => setTimeout(r, 100));
  return { example, elsewhere, blocked };
});
await context.result(out);
`

// TestRunScriptOnNamedSites: pages served under names behave as the web
// sites they stand for.
func TestRunScriptOnNamedSites(t *testing.T) {
	testenv.CheckGoroutines(t)
	res := hosttest.Run(t, realScript(t, hosttest.Script{
		Source: namedSitesScript, Sites: guideSites(), Start: "https://example.com/", Approve: true,
	}))
	require.Equal(t, history.StateSucceeded, res.Entry.State, "the run")
	assert.JSONEq(t, `{
		"fillOnExample": "site_not_allowed",
		"plainHttp": 200,
		"plainHttpLanded": "https://example.com/b",
		"cart": 200,
		"fillOnShop": "ok",
		"csp": {"example": "opaque", "elsewhere": "failed", "blocked": ["https://elsewhere.example/"]}
	}`, string(res.Entry.Result))
	assert.Empty(t, res.Site, "no Pages were served")
}

// TestRunScriptRefusesBadSites: a Sites key must be a web host name, and
// a Start without Pages an https:// address; neither starts a browser.
func TestRunScriptRefusesBadSites(t *testing.T) {
	testenv.CheckGoroutines(t)
	pages := fstest.MapFS{"index.html": {Data: []byte("<title>x</title>")}}
	for _, name := range []string{"127.0.0.1", "localhost", "router.local", "intranet", "Example.com", "example.com.",
		"example.com:443", "*.example.com", "example.com, MAP * 10.0.0.1", "exa mple.com", ""} {
		_, err := hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{
			Source: namedSitesScript, Sites: map[string]fs.FS{name: pages}, Approve: true,
		}))
		assert.ErrorIs(t, err, hosttest.ErrBadSite, "%q", name)
	}
	_, err := hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{
		Source: namedSitesScript, Sites: map[string]fs.FS{"example.com": nil}, Approve: true,
	}))
	assert.ErrorIs(t, err, hosttest.ErrBadSite, "a site with no pages")
	_, err = hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{
		Source: namedSitesScript, Sites: guideSites(), Start: "/cart", Approve: true,
	}))
	assert.ErrorIs(t, err, hosttest.ErrBadStart)
	_, err = hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{
		Source: namedSitesScript, Start: "http://example.com/", Approve: true,
	}))
	assert.ErrorIs(t, err, hosttest.ErrBadStart)
}
