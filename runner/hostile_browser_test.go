package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

// hostilePages are pages written to hurt the host: a dialog storm, and a
// site that plants a service worker rewriting its own pages.
func hostilePages() *testenv.Pages {
	p := testenv.NewPages()
	p.HTML("/storm", `<title>storm</title>
<button style="position:absolute;left:0;top:0;width:100px;height:40px" onclick="storm()">storm</button>
<script>
addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = ""; });
function storm() { for (let i = 0; ; i++) { alert("a" + i); confirm("c" + i); prompt("p" + i, "x"); } }
</script>`)
	p.HTML("/calm", `<title>calm</title><h1>calm</h1>`)
	p.HTML("/sw/page", `<title>original</title><h1 id=h>served by the site</h1>`)
	p.Once("/sw/worker.js", httpText("text/javascript", `
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (e) => {
  if (new URL(e.request.url).pathname === "/sw/page") {
    e.respondWith(new Response("<title>rewritten</title><h1 id=h>rewritten by the worker</h1>",
      { headers: { "Content-Type": "text/html" } }));
  }
});`))
	return p
}

// hostileEnv is a runner over a browser the test can kill, with the
// host's browser events collected.
type hostileEnv struct {
	*browserEnv
	bt     *cdptabs.Tabs
	events chan cdptabs.BrowserEvent
	ready  chan string // output lines starting with "ready"
}

// newHostileEnv starts a browser (launched, or attached over a port) and
// a runner driving it, serving hostilePages; config adjusts the runner.
func newHostileEnv(t *testing.T, attached bool, config func(*runner.Config)) *hostileEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := &hostileEnv{events: make(chan cdptabs.BrowserEvent, 8), ready: make(chan string, 8)}
	cfg := cdptabs.Config{OnBrowser: func(ev cdptabs.BrowserEvent) { h.events <- ev }}
	var err error
	if attached {
		h.bt, err = cdptabs.AttachWith(ctx, testenv.ChromiumWithPort(t), cfg)
	} else {
		h.bt, err = cdptabs.LaunchWith(ctx, launch.Options{Path: testenv.Chromium(t), Args: testenv.ChromiumArgs()}, cfg)
	}
	require.NoError(t, err)
	t.Cleanup(func() { h.bt.Shutdown() })
	srv := testenv.Site(hostilePages())
	t.Cleanup(srv.Close)
	h.browserEnv = newBrowserEnvWith(t, envOptions{tabs: h.bt, site: srv, config: config, onOutput: func(line string) {
		if strings.HasPrefix(line, "ready") {
			h.ready <- line
		}
	}})
	return h
}

// start starts a script without waiting for it.
func (h *hostileEnv) start(t *testing.T, name, src string) *runner.Run {
	t.Helper()
	p := filepath.Join(h.dir, name)
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	r, err := h.m.Start(context.Background(), runner.Request{Script: p})
	require.NoError(t, err)
	return r
}

func (h *hostileEnv) event(t *testing.T) cdptabs.BrowserEvent {
	t.Helper()
	select {
	case ev := <-h.events:
		return ev
	case <-time.After(time.Minute):
		t.Fatal("the host was not told about its browser")
		return cdptabs.BrowserEvent{}
	}
}

// timedCall is what a script reports of one call: its value or error
// code, and how long it took.
type timedCall struct {
	Value   json.RawMessage `json:"value"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Ms      float64         `json:"ms"`
}

const timedJS = `const timed = async (f) => {
  const t0 = Date.now();
  try { return { value: (await f()) ?? null, ms: Date.now() - t0 }; } catch (e) { return { code: e.code ?? String(e), message: String(e), ms: Date.now() - t0 }; }
};
`

// calmRun is a browser-only run that opens a page and reads it back.
func calmRun(t *testing.T, h *hostileEnv) history.Entry {
	t.Helper()
	return h.run(t, "calm.ts", fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
await context.result({ title: await tab.title(), text: await tab.text({ selector: "h1" }) });
`, h.site.URL+"/calm"))
}

func requireCalm(t *testing.T, e history.Entry) {
	t.Helper()
	var got struct{ Title, Text string }
	result(t, e, &got)
	require.Equal(t, "calm", got.Title)
	require.Equal(t, "calm", got.Text)
}

// TestHostileDialogStorm storms two tabs of one run at once, one
// dismissing every dialog (the default) and one accepting beforeunload
// and confirm: the two policies take the same 30 s default wait, so they
// share it rather than each taking a run and a browser of its own.
func TestHostileDialogStorm(t *testing.T) {
	h := newHostileEnv(t, false, nil)
	entry := h.run(t, "storm.ts", fmt.Sprintf(`// @permissions browser forms page-js
import { context, tabs } from "tranquil/automation";
%s
// storm opens a tab on the storm page, sets policy on it, clicks the
// button and makes the calls a storm answers quickly, then starts the
// evaluate, which only its default wait ends.
async function storm(policy) {
  const tab = await tabs.open(%q);
  if (policy) await tab.onDialog(policy);
  // The click lands and its handler storms for ever, so the page never
  // finishes handling it: the click ends at its own timeout.
  const click = await timed(() => tab.click({ role: "button", name: "storm" }, { timeout: 2000 }));
  const goto = await timed(() => tab.goto(%q, { timeout: 3000 }));
  const title = await timed(() => tab.title());
  return { tab, quick: { click, goto, title }, evaluate: timed(() => tab.evaluate(() => 1)) };
}
// The accepting tab starts once the dismissing one's quick calls are
// done, so that each tab's quick calls are timed beside one storm at most.
const dismissed = await storm(null);
const accepted = await storm({ beforeunload: "accept", confirm: "accept" });
const out = {};
for (const [name, s] of [["dismissed", dismissed], ["accepted", accepted]]) {
  const evaluate = await s.evaluate;
  const closed = await timed(() => s.tab.close());
  out[name] = { ...s.quick, evaluate, closed };
}
await context.result(out);
`, timedJS, h.site.URL+"/storm", h.site.URL+"/calm"))
	var got map[string]struct{ Click, Goto, Title, Evaluate, Closed timedCall }
	result(t, entry, &got)
	require.Len(t, got, 2)
	for policy, got := range got {
		// Each call returned within its own timeout: click's 2 s, goto's
		// 3 s, the 30 s every other call has.
		require.Equal(t, string(errcode.Timeout), got.Click.Code, "%s: %+v", policy, got.Click)
		require.Less(t, got.Click.Ms, 3000.0, policy)
		require.Equal(t, string(errcode.Navigation), got.Goto.Code, "%s: a storm refuses navigation at once: %+v", policy, got.Goto)
		require.Less(t, got.Goto.Ms, 1000.0, policy)
		require.Empty(t, got.Title.Code, "%s: %+v", policy, got.Title)
		require.JSONEq(t, `"storm"`, string(got.Title.Value), "%s: the browser's copy answers during a storm", policy)
		require.Less(t, got.Title.Ms, 4000.0, policy)
		require.Equal(t, string(errcode.Timeout), got.Evaluate.Code, "%s: %+v", policy, got.Evaluate)
		require.Less(t, got.Evaluate.Ms, 32000.0, policy)
		require.Empty(t, got.Closed.Code, "%s: the tab in a storm closes: %+v", policy, got.Closed)
	}

	var storms int
	for _, a := range entry.Actions {
		if a.Method == "dialog" && strings.HasPrefix(a.Target, "dialog storm: ") {
			storms++
		}
	}
	require.GreaterOrEqual(t, storms, 2, "the log records the storms: %+v", entry.Actions)
	require.Less(t, len(entry.Actions), 200, "one entry per tab and storm second, not per dialog")

	// The browser lives on and the next run works.
	require.NoError(t, h.bt.Browser().Err())
	require.Empty(t, h.events, "the browser never went away")
	requireCalm(t, calmRun(t, h))
	require.Empty(t, h.events)
}

// killRun is a run that is waiting on its tab when the browser dies.
func killRun(h *hostileEnv) string {
	return fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
%s
const tab = await tabs.open(%q);
console.log("ready");
const wait = await timed(() => tab.waitFor("#never", { timeout: 60000 }));
const title = await timed(() => tab.title());
const active = await timed(() => tabs.active());
await context.result({ wait, title, active });
`, timedJS, h.site.URL+"/calm")
}

func TestHostileBrowserKilledMidRun(t *testing.T) {
	h := newHostileEnv(t, false, nil)
	r := h.start(t, "kill.ts", killRun(h))
	<-h.ready
	old := h.bt.Process()
	require.NoError(t, old.Kill())

	ev := h.event(t)
	require.Equal(t, cdptabs.BrowserGone, ev.Kind)
	require.True(t, ev.Launched)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	var got struct{ Wait, Title, Active timedCall }
	result(t, entry, &got)
	require.Equal(t, string(errcode.Closed), got.Wait.Code, "the call in flight fails closed: %+v", got.Wait)
	require.Equal(t, string(errcode.Closed), got.Title.Code, "and so does the next on the dead browser's tab: %+v", got.Title)
	require.Equal(t, string(errcode.Closed), got.Active.Code, "the run gets no tab of the fresh browser: %+v", got.Active)

	// The next run gets a fresh browser.
	requireCalm(t, calmRun(t, h))
	require.Equal(t, cdptabs.BrowserRelaunched, h.event(t).Kind)
	require.NotEqual(t, old.Pid(), h.bt.Process().Pid())
}

func TestHostileAttachedBrowserGone(t *testing.T) {
	h := newHostileEnv(t, true, nil)
	r := h.start(t, "kill.ts", killRun(h))
	<-h.ready
	// The user quits their browser.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	quit, err := cdp.Connect(ctx, h.bt.Endpoint(), nil)
	require.NoError(t, err)
	defer quit.Close()
	_ = quit.Client().Browser.Close(ctx)

	ev := h.event(t)
	require.Equal(t, cdptabs.BrowserGone, ev.Kind)
	require.False(t, ev.Launched)
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	var got struct{ Wait, Title, Active timedCall }
	result(t, entry, &got)
	require.Equal(t, string(errcode.Closed), got.Wait.Code, "%+v", got.Wait)

	// Nothing replaced it: the next run is told the browser is closed.
	next := h.run(t, "calm.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
try { await tabs.active(); await context.result("active"); } catch (e) { await context.result(e.code); }
`)
	var code string
	result(t, next, &code)
	require.Equal(t, string(errcode.Closed), code)
	require.Empty(t, h.events, "an attached browser is only reported")
}

// httpText serves body with content type ct.
func httpText(ct, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		fmt.Fprint(w, body)
	})
}

// workerRuns has a page-js run register a service worker on the site and
// a later browser-only run load a page in the worker's scope; it returns
// the first run's entry and what the second run's page showed.
func workerRuns(t *testing.T, h *hostileEnv, kept bool) (history.Entry, string) {
	t.Helper()
	// A host that refuses workers may unregister this one before it is
	// active, and then ready never settles: that run waits for it a few
	// seconds at most (a worker left alone is active well before).
	ready := "await Promise.race([navigator.serviceWorker.ready, new Promise((ok) => setTimeout(ok, 3000))]);"
	if kept {
		ready = "await navigator.serviceWorker.ready;"
	}
	plant := h.run(t, "plant.ts", fmt.Sprintf(`// @permissions browser page-js
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
const scope = await tab.evaluate(async () => {
  const r = await navigator.serviceWorker.register("/sw/worker.js", { scope: "/sw/" });
  %s
  return r.scope;
});
await context.result(scope);
`, h.site.URL+"/sw/page", ready))
	var scope string
	result(t, plant, &scope)
	require.Equal(t, h.site.URL+"/sw/", scope)
	later := h.run(t, "later.ts", fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open(%q);
await context.result(await tab.text({ selector: "#h" }));
`, h.site.URL+"/sw/page"))
	var shown string
	result(t, later, &shown)
	return plant, shown
}

func TestHostileServiceWorkerRemoved(t *testing.T) {
	h := newHostileEnv(t, false, nil)
	plant, shown := workerRuns(t, h, false)
	require.Equal(t, "served by the site", shown, "the later run's page is not served by the worker")
	require.Contains(t, plant.Actions, history.Action{At: findAt(plant.Actions, "serviceWorker"), Method: "serviceWorker",
		Target: h.site.URL, Site: "127.0.0.1", Outcome: "refused"}, "the run's history shows the refusal")
}

// TestHostileServiceWorkerKept: a host that opts in keeps the worker, and
// it then rewrites the later run's page.
func TestHostileServiceWorkerKept(t *testing.T) {
	t.Parallel() // see parallel_test.go
	h := newHostileEnv(t, false, func(c *runner.Config) { c.KeepServiceWorkers = true })
	_, shown := workerRuns(t, h, true)
	require.Equal(t, "rewritten by the worker", shown)
}

// findAt is the time of the first action of method, so that an expected
// action can be compared whole.
func findAt(actions []history.Action, method string) time.Time {
	for _, a := range actions {
		if a.Method == method {
			return a.At
		}
	}
	return time.Time{}
}
