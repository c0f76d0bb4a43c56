package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/runner"
)

// spellingsPolicy lets the pages below reach loopback only, in every
// spelling of it a policy can name (CSP has no syntax for an IPv6
// address: /nocsp serves the one page that needs one, with none).
const spellingsPolicy = "default-src 'self' 'unsafe-inline' http://127.0.0.1:* ws://127.0.0.1:* http://localhost:* " +
	"ws://localhost:* http://0.0.0.0:* ws://0.0.0.0:*"

// popupPages serves a page that opens popups by itself, as soon as it
// loads: two to the service (window.open and a link with a target), one
// to a page of its own site that reads the service; and blank pages to run
// page code in.
func popupPages(t *testing.T, service string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	html := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
		})
	}
	html("/popups", `<title>opener</title><a id=a target=_blank href="`+service+`/popup-link?token=s3cr3t">go</a>
<script>window.open("`+service+`/popup-open?token=s3cr3t"); window.open("/child"); document.getElementById("a").click();</script>`)
	html("/child", `<title>child</title><script>fetch("`+service+`/child-fetch").catch(() => {});
new WebSocket("`+strings.Replace(service, "http:", "ws:", 1)+`/child-ws");</script>`)
	html("/plain", `<title>plain</title>`)
	html("/nocsp", `<title>plain</title>`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/nocsp" {
			w.Header().Set("Content-Security-Policy", spellingsPolicy)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// popupScript lets its page open popups, reads the service by every
// spelling of its address from page code, and reports what it can see
// of the tabs it can list (each one's address and title) and of its own
// after a refused goto.
const popupScript = `
import { context, tabs } from "tranquil/automation";
const out: Record<string, unknown> = {};
// The user's own tab, on another local service.
const mine = await tabs.active();
out.active = await mine.url() + " " + await mine.title();
const tab = await tabs.open(PAGES + "/popups");
const read = async (u: string) => {
  try {
    return await tab.evaluate(async (u: string) => {
      const viaFetch = await fetch(u).then((r) => r.text(), () => "refused");
      const viaXHR = await new Promise((ok) => { const x = new XMLHttpRequest(); x.open("GET", u);
        x.onload = () => ok(x.responseText); x.onerror = () => ok("refused"); x.send(); });
      return viaFetch + " | " + viaXHR;
    }, u);
  } catch (err) { return "error " + ((err as { code?: string }).code ?? String(err)); }
};
for (const h of SPELLINGS) {
  await tab.goto(PAGES + (h.startsWith("[") ? "/nocsp" : "/plain"));
  out["read " + h] = await read("http://" + h + ":" + PORT + "/js-" + encodeURIComponent(h));
}
// The page sends itself there: refused, the tab shows the browser's error
// page for that address.
const from = await tab.url();
await tab.evaluate((u: string) => { location.href = u; }, "http://127.0.0.1:" + PORT + "/location?token=s3cr3t");
for (let i = 0; i < 200 && await tab.url() === from; i++) await new Promise((r) => setTimeout(r, 25));
out.after = await tab.url() + " " + await tab.title();
await new Promise((r) => setTimeout(r, 500));
const all = await tabs.all();
const seen: string[] = [];
for (const t of all) {
  try { seen.push(await t.url() + " " + await t.title()); } catch (err) { seen.push("error " + (err as { code?: string }).code); }
}
out.seen = seen;
out.found = (await tabs.find("admin")).length + (await tabs.find(PORT)).length;
await context.result(out);
`

// TestHostilePopupsAndPageRequests: with browser and page-js and no
// sites=, a run's page reads the local service by no spelling of its
// address, its popups to the service are refused before they ask (and
// never listed), its popup to an allowed page is the run's tab, held to
// the run's grants and closed when the run ends. With sites= naming the
// service, the same reads succeed, and that popup too closes with the run.
func TestHostilePopupsAndPageRequests(t *testing.T) {
	secret := newLocalService(t)
	pages := popupPages(t, secret.url)
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(pages.URL)}})
	spellings := []string{"127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001", "[::ffff:127.0.0.1]", "0.0.0.0"}
	quoted, _ := json.Marshal(spellings)
	src := strings.NewReplacer("PAGES", fmt.Sprintf("%q", pages.URL), "SPELLINGS", string(quoted),
		"PORT", fmt.Sprintf("%q", secret.port)).Replace(popupScript)

	// The user has a tab open on another local service, which the run
	// finds as the active tab.
	users := newLocalService(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	own, err := e.tabs.Open(ctx, runner.RunInfo{}, users.url+"/dashboard", runner.TabOpenOptions{})
	require.NoError(t, err)

	entry := e.run(t, "popups.ts", "// @permissions browser page-js\n"+src)
	var out map[string]any
	result(t, entry, &out)
	defer func() {
		if t.Failed() {
			t.Logf("what the script met: %v", out)
		}
	}()
	for _, h := range spellings {
		assert.Equal(t, "refused | refused", out["read "+h], "page code reading %s", h)
	}
	for _, s := range append(out["seen"].([]any), out["after"], out["active"]) {
		assert.NotContains(t, s, secret.port, "no tab on the service is seen")
		assert.NotContains(t, s, users.port, "nor the user's tab on the other")
		assert.NotContains(t, s, "admin", "nor their titles")
	}
	assert.Contains(t, fmt.Sprint(out["seen"]), pages.URL+"/child child", "the allowed popup is one of the run's tabs")
	assert.EqualValues(t, 0, out["found"])
	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, secret.reached(), "the service received nothing")
	popups := 0
	for _, a := range entry.Actions {
		if a.Method == "popup" && a.Outcome == "navigation_blocked" {
			popups++
			assert.NotContains(t, a.Target, "s3cr3t", "the log keeps no query")
		}
	}
	assert.Equal(t, 2, popups, "both popups to the service are logged as refused: %+v", entry.Actions)
	assertNoTabsOn(t, e, pages.URL+"/child", secret.url)
	require.NoError(t, e.tabs.Close(ctx, runner.RunInfo{}, own.ID))

	// Granted: the reads succeed, and the popups to the service load, as
	// the run's tabs, closed with it.
	granted := fmt.Sprintf("// @permissions browser page-js sites=127.0.0.1:%[1]s,localhost:%[1]s,0.0.0.0:%[1]s,%[2]s\n",
		secret.port, hostOfURL(pages.URL))
	entry = e.run(t, "popups-granted.ts", granted+src)
	result(t, entry, &out)
	for _, h := range spellings {
		assert.Equal(t, "<title>admin</title><p id=s>the secret</p> | <title>admin</title><p id=s>the secret</p>", out["read "+h], h)
	}
	assert.Contains(t, fmt.Sprint(out["seen"]), secret.url+"/popup-open?token=s3cr3t admin", "a granted popup is listed")
	assertNoTabsOn(t, e, pages.URL+"/child", secret.url)
}

// assertNoTabsOn checks that the host shows no tab on any of the
// addresses: the run's tabs closed with it.
func assertNoTabsOn(t *testing.T, e *browserEnv, prefixes ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	infos, err := e.tabs.All(ctx, runner.RunInfo{})
	require.NoError(t, err)
	for _, info := range infos {
		for _, p := range prefixes {
			assert.False(t, strings.HasPrefix(info.URL, p), "the tab at %s outlived the run", info.URL)
		}
	}
}
