package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// spellingsCSP is the policy of the pages that reach for the local
// service: loopback only, in each spelling the tests use but one (the
// browser writes 127.1, 2130706433 and 0x7f000001 as 127.0.0.1; see probe
// for [::ffff:127.0.0.1]).
const spellingsCSP = "default-src 'self' 'unsafe-inline' blob: data: http://127.0.0.1:* ws://127.0.0.1:* " +
	"http://localhost:* ws://localhost:* http://0.0.0.0:* ws://0.0.0.0:* http://[::ffff:7f00:1]:* ws://[::ffff:7f00:1]:*"

// localSpellings are the ways a page can write this computer's address.
var localSpellings = []string{"127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001", "[::ffff:127.0.0.1]", "0.0.0.0"}

// requestKinds are the requests each page makes of the local service, in
// its own code and in its workers.
var requestKinds = []string{"fetch", "xhr", "img", "script", "iframe", "worker", "workerws", "ws", "es", "shared", "sharedws", "sw", "swws"}

// probeJS makes each kind of request to the target ?t= with paths tagged
// ?g=, and sets window.finished once each has failed, loaded or waited
// three seconds.
const probeJS = `
const q = new URLSearchParams(location.search), base = q.get("t"), tag = q.get("g");
const ws = base.replace(/^http/, "ws"), at = (k) => base + "/" + tag + "-" + k, wsAt = (k) => ws + "/" + tag + "-" + k;
const waits = [];
const settle = (f) => waits.push(Promise.race([new Promise((r) => { try { f(r); } catch { r(); } }), new Promise((r) => setTimeout(r, 3000))]));
const args = (a, b) => "?u=" + encodeURIComponent(at(a)) + "&w=" + encodeURIComponent(wsAt(b)) + (q.get("nocsp") ? "&nocsp=1" : "");
settle((r) => fetch(at("fetch")).then(r, r));
settle((r) => { const x = new XMLHttpRequest(); x.open("GET", at("xhr")); x.onloadend = r; x.send(); });
settle((r) => { const i = new Image(); i.onload = i.onerror = r; i.src = at("img"); });
settle((r) => { const s = document.createElement("script"); s.onload = s.onerror = r; s.src = at("script"); document.head.append(s); });
settle((r) => { const f = document.createElement("iframe"); f.onload = r; f.src = at("iframe"); document.documentElement.append(f); });
settle((r) => { const w = new Worker("/ln/worker.js" + args("worker", "workerws")); w.onmessage = w.onerror = r; });
settle((r) => { const s = new WebSocket(wsAt("ws")); s.onerror = s.onclose = s.onopen = r; });
settle((r) => { const e = new EventSource(at("es")); e.onerror = e.onopen = () => { e.close(); r(); }; });
settle((r) => { const s = new SharedWorker("/ln/worker.js" + args("shared", "sharedws") + "&shared=1"); s.port.onmessage = r; s.onerror = r; });
settle((r) => navigator.serviceWorker.register("/ln/worker.js" + args("sw", "swws"), { scope: "/ln/scope-" + tag + "/" }).then((reg) => {
  const sw = reg.installing || reg.waiting || reg.active;
  if (!sw) return r();
  sw.onstatechange = () => { if (sw.state === "activated" || sw.state === "redundant") r(); };
}, r));
window.finished = Promise.all(waits).then(() => "done");
`

// workerJS fetches ?u= and opens a WebSocket to ?w=, then answers its page.
const workerJS = `
const q = new URLSearchParams(location.search);
const probe = Promise.all([
  fetch(q.get("u")).catch(() => {}),
  new Promise((r) => { const s = new WebSocket(q.get("w")); s.onerror = s.onclose = s.onopen = r; setTimeout(r, 3000); }),
]);
if (q.get("shared")) onconnect = (e) => probe.then(() => e.ports[0].postMessage("done"));
else if (typeof WorkerGlobalScope !== "undefined" && !self.registration) probe.then(() => postMessage("done"));
self.addEventListener?.("install", (e) => e.waitUntil?.(probe));
`

// finished waits for the probing page's requests to settle (its script
// may not have run yet when the page's address shows).
const finished = `() => new Promise((ok) => { const t = setInterval(() => { if (window.finished) { clearInterval(t); ok(window.finished); } }, 20); })`

// localNet is a browser of its own with a guarded connection, a site of
// probing pages that every guarded tab may load, and a local service on
// another port that answers anyone (Access-Control-Allow-Origin: *) and
// records every request that reached it.
type localNet struct {
	p       *testBrowser
	g       *Gateway
	pages   *httptest.Server
	service *httptest.Server
	port    string
	mu      sync.Mutex
	hits    []string
	ran     int // eager pages that ran
	logMu   sync.Mutex
	log     []Action
}

func newLocalNet(t *testing.T, ctx context.Context) *localNet {
	t.Helper()
	e := &localNet{}
	e.service = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			return
		}
		e.mu.Lock()
		e.hits = append(e.hits, r.URL.Path)
		e.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Security-Policy", testenv.LoopbackCSP)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>admin</title><p id=s>the secret</p>`)
	}))
	t.Cleanup(e.service.Close)
	e.port = e.service.URL[strings.LastIndex(e.service.URL, ":")+1:]
	mux := http.NewServeMux()
	js := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, body)
		})
	}
	js("/ln/worker.js", workerJS)
	js("/ln/probe.js", probeJS)
	// A page that reaches for the service the moment it is parsed, from
	// its own code and a worker's, and reports that it ran.
	mux.HandleFunc("/ln/eager", func(w http.ResponseWriter, r *http.Request) {
		ws := "ws://127.0.0.1:" + e.port + "/" + r.URL.Query().Get("g")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>eager</title><script>new WebSocket(%[1]q);
new Worker(URL.createObjectURL(new Blob(["new WebSocket(" + JSON.stringify(%[2]q) + ")"], { type: "text/javascript" })));
fetch("/ln/ran");</script>`, ws+"-inline", ws+"-worker")
	})
	mux.HandleFunc("/ln/ran", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.ran++
		e.mu.Unlock()
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>probe</title><script src="/ln/probe.js"></script>`)
	})
	e.pages = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("nocsp") == "" {
			w.Header().Set("Content-Security-Policy", spellingsCSP)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(e.pages.Close)
	e.p, e.g = startGuarded(t, ctx, e.pages.URL)
	return e
}

func (e *localNet) tab(t *testing.T, ctx context.Context, opts TabOptions) *Tab {
	t.Helper()
	return openGuarded(t, ctx, e.p, e.g, opts, func(a Action) {
		e.logMu.Lock()
		e.log = append(e.log, a)
		e.logMu.Unlock()
	})
}

// reached lists the paths of the service's requests tagged tag.
func (e *localNet) reached(tag string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, h := range e.hits {
		if strings.HasPrefix(h, "/"+tag+"-") {
			out = append(out, strings.TrimPrefix(h, "/"+tag+"-"))
		}
	}
	return out
}

// probed loads the probing page in tab, aimed at host's spelling of this
// computer's address and tagged tag, and waits until its requests have
// settled. It runs in a goroutine: the error says what failed.
func (e *localNet) probed(ctx context.Context, tab *Tab, host, tag string) error {
	page := e.pages.URL + "/?t=" + url.QueryEscape("http://"+host+":"+e.port) + "&g=" + tag
	if strings.HasPrefix(host, "[") {
		// A policy cannot name an IPv6 address (CSP's host sources have
		// no brackets), so these pages have none: they make requests to
		// the test's own service only. With one, the browser would refuse
		// every request here itself, and the test could not fail.
		page += "&nocsp=1"
	}
	if _, err := tab.Goto(ctx, page, Load); err != nil {
		return fmt.Errorf("%s: %w", tag, err)
	}
	v, err := tab.Evaluate(ctx, finished)
	if err != nil {
		return fmt.Errorf("%s: %w", tag, err)
	}
	if string(v) != `"done"` {
		return fmt.Errorf("%s: the probe ended with %s", tag, v)
	}
	return nil
}

// probeEach probes every spelling of this computer's address at once,
// each from a tab of its own opened with opts, tagged prefix and its
// index: a refused request waits out the probe's three seconds, so one
// after another they took most of a minute. The tags keep their requests
// apart (each has its own service worker scope and shared worker). It
// returns the tabs.
func (e *localNet) probeEach(t *testing.T, ctx context.Context, opts TabOptions, prefix string) []*Tab {
	t.Helper()
	tabs := make([]*Tab, len(localSpellings))
	for i := range tabs {
		tabs[i] = e.tab(t, ctx, opts)
	}
	errs := make([]error, len(tabs))
	var wg sync.WaitGroup
	for i, host := range localSpellings {
		wg.Go(func() { errs[i] = e.probed(ctx, tabs[i], host, fmt.Sprintf("%s%d", prefix, i)) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	return tabs
}

// TestLocalSubresourcesNeedAGrant: the pages of a guarded tab reach this
// computer's service by no spelling of its address and no kind of request
// (their own, their workers', shared and service workers', WebSockets)
// unless the tab's sites name it; with the grant, every one does.
func TestLocalSubresourcesNeedAGrant(t *testing.T) {
	ctx := tctx(t, 4*time.Minute)
	e := newLocalNet(t, ctx)
	// A worker serves every guarded tab on its origin, and may reach only
	// what all of them may: the refused tabs go first, and are closed
	// before the granted ones open.
	refused := e.probeEach(t, ctx, TabOptions{}, "refused")
	// Whatever was on its way has arrived by now.
	time.Sleep(300 * time.Millisecond)
	for i, host := range localSpellings {
		assert.Empty(t, e.reached(fmt.Sprintf("refused%d", i)), "%s: the service received nothing", host)
	}
	e.logMu.Lock()
	var logged []string
	for _, a := range e.log {
		if a.Method == "request" && a.Outcome == "navigation_blocked" {
			logged = append(logged, a.Target)
		}
	}
	e.logMu.Unlock()
	assert.Contains(t, logged, "http://127.0.0.1:"+e.port+"/refused0-fetch", "a refused request is logged")
	for _, tab := range refused {
		require.NoError(t, tab.Close(ctx))
	}

	// The probing page's own site is a site too: page actions run only there.
	e.probeEach(t, ctx, TabOptions{Sites: []string{"127.0.0.1:" + e.port, "localhost:" + e.port, "0.0.0.0:" + e.port,
		strings.TrimPrefix(e.pages.URL, "http://")}}, "granted")
	for i, host := range localSpellings {
		tag := fmt.Sprintf("granted%d", i)
		deadline := time.Now().Add(10 * time.Second)
		for len(e.reached(tag)) < len(requestKinds) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		got := e.reached(tag)
		for _, k := range requestKinds {
			assert.True(t, slices.Contains(got, k), "%s: with sites= naming it, %s reached the service (it got %v)", host, k, got)
		}
	}
}

// TestLocalSocketRulesOutliveTheNetworkDomain: the tab turns the Network
// domain off a while after a goto, which clears a target's rules; it sends
// them again, so a WebSocket opened later is still held back.
func TestLocalSocketRulesOutliveTheNetworkDomain(t *testing.T) {
	ctx := tctx(t, time.Minute)
	e := newLocalNet(t, ctx)
	tab := e.tab(t, ctx, TabOptions{})
	_, err := tab.Goto(ctx, e.pages.URL+"/?t=none", Load)
	require.NoError(t, err)
	waitNetworkOff(t, ctx, tab)
	_, err = tab.Evaluate(ctx, `(u) => new Promise((r) => { const s = new WebSocket(u); s.onerror = s.onopen = r; setTimeout(r, 3000); }).then(() => "")`,
		"ws://127.0.0.1:"+e.port+"/late-ws")
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, e.reached("late"))
}

// TestPopupsAreTheOpenersTabs: a page a guarded tab's page opens is the
// tab's. One aimed at a local address the tab may not reach is closed
// before its request goes out, whether opened by window.open or a link
// with a target; one it may load is attached, guarded, before it loads,
// and detached with its opener.
func TestPopupsAreTheOpenersTabs(t *testing.T) {
	ctx := tctx(t, 2*time.Minute)
	e := newLocalNet(t, ctx)
	var adopted []*Tab
	var amu sync.Mutex
	opener := e.tab(t, ctx, TabOptions{})
	_, err := opener.Goto(ctx, e.pages.URL+"/?t=none", Load)
	require.NoError(t, err)
	before, err := e.p.Browser().Targets(ctx)
	require.NoError(t, err)

	// Refused: the service hears nothing, and the popups are gone.
	_, err = opener.Evaluate(ctx, `(u) => {
  window.open(u + "/popup-open");
  const a = document.createElement("a"); a.href = u + "/popup-link"; a.target = "_blank"; a.textContent = "go";
  document.documentElement.append(a); a.click();
  return "";
}`, e.service.URL)
	require.NoError(t, err)
	waitFor(t, ctx, "two refused popups logged", func() bool { return len(e.refusals("popup")) == 2 })
	assert.ElementsMatch(t, []string{e.service.URL + "/popup-open", e.service.URL + "/popup-link"}, e.refusals("popup"))
	waitFor(t, ctx, "the refused popups closed", func() bool {
		now, err := e.p.Browser().Targets(ctx)
		return err == nil && len(now) == len(before)
	})
	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, e.reached("popup"), "the service received nothing")

	// Allowed: attached through Popup before it loads, and guarded: its
	// own requests to the service are refused.
	guarded := e.tab(t, ctx, TabOptions{Popup: func(ctx context.Context, id string) (*Tab, error) {
		p, err := e.p.Browser().AttachWith(ctx, id, TabOptions{Gateway: e.g})
		amu.Lock()
		adopted = append(adopted, p)
		amu.Unlock()
		return p, err
	}})
	_, err = guarded.Goto(ctx, e.pages.URL+"/?t=none", Load)
	require.NoError(t, err)
	probe := e.pages.URL + "/?t=" + url.QueryEscape(e.service.URL) + "&g=pop"
	_, err = guarded.Evaluate(ctx, `(u) => { window.open(u); return ""; }`, probe)
	require.NoError(t, err)
	waitFor(t, ctx, "the popup adopted", func() bool { amu.Lock(); defer amu.Unlock(); return len(adopted) == 1 })
	amu.Lock()
	p := adopted[0]
	amu.Unlock()
	waitFor(t, ctx, "the popup's page loaded", func() bool { u, _ := p.URL(ctx); return u == probe })
	v, err := p.Evaluate(ctx, finished)
	require.NoError(t, err)
	assert.JSONEq(t, `"done"`, string(v))
	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, e.reached("pop"), "the popup's requests were held to its opener's grants")
	require.NoError(t, p.Close(ctx))

	// A popup's page that reaches out the moment it is parsed: its rules
	// were in force before it ran.
	_, err = guarded.Evaluate(ctx, `(u) => { window.open(u); return ""; }`, e.pages.URL+"/ln/eager?g=eager")
	require.NoError(t, err)
	waitFor(t, ctx, "the eager popup ran", func() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.ran == 1 })
	time.Sleep(500 * time.Millisecond)
	assert.Empty(t, e.reached("eager"), "the eager popup's sockets were held back")

	// Without Popup, the gateway attaches it with the opener's options and
	// detaches it with the opener.
	_, err = opener.Evaluate(ctx, `(u) => { window.open(u); return ""; }`, e.pages.URL+"/?t=none&g=kept")
	require.NoError(t, err)
	var kept *Tab
	waitFor(t, ctx, "the popup kept", func() bool {
		opener.local.mu.Lock()
		defer opener.local.mu.Unlock()
		if ps := opener.local.popups; len(ps) == 1 {
			kept = ps[0]
		}
		return kept != nil
	})
	assert.Equal(t, opener.opts.Sites, kept.opts.Sites)
	require.NoError(t, opener.Detach(ctx))
	select {
	case <-kept.Done():
	case <-ctx.Done():
		t.Fatal("the popup's session outlived its opener's")
	}
}

// refusals lists the targets of the refusals logged by method.
func (e *localNet) refusals(method string) []string {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	var out []string
	for _, a := range e.log {
		if a.Method == method && a.Outcome == "navigation_blocked" {
			out = append(out, a.Target)
		}
	}
	return out
}

// waitFor polls cond until it holds, failing t when ctx ends first.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// globMatch is the browser's matching of a Fetch pattern (* any run, ?
// one character, \ escapes), for checking the patterns here.
func globMatch(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch c := pattern[0]; c {
	case '*':
		for i := 0; i <= len(s); i++ {
			if globMatch(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && globMatch(pattern[1:], s[1:])
	case '\\':
		if len(pattern) > 1 {
			pattern = pattern[1:]
		}
	}
	return s != "" && s[0] == pattern[0] && globMatch(pattern[1:], s[1:])
}

// TestLocalRequestPatterns: every address a browser writes for this
// computer or the local network is paused; the web's are not.
func TestLocalRequestPatterns(t *testing.T) {
	paused := func(u string) bool {
		for _, p := range localRequestPatterns() {
			if globMatch(*p.URLPattern, u) {
				return true
			}
		}
		return false
	}
	for _, u := range []string{
		"http://127.0.0.1:8080/x", "https://127.255.0.1/", "http://0.0.0.0:3000/", "http://10.1.2.3/", "http://192.168.1.1/",
		"http://169.254.169.254/latest/meta-data", "http://172.16.0.1/", "http://172.31.255.255/", "http://100.64.0.1/",
		"http://100.127.0.1/", "http://[::1]:8080/", "http://[::ffff:7f00:1]/", "http://[fe80::1]/", "http://[fd00::1]/",
		"http://localhost/", "http://localhost:5173/", "http://localhost./", "http://app.localhost:3000/x",
		"http://printer.local/", "https://nas.home.arpa:5001/", "http://db.internal:5432/", "http://box.lan/",
		"http://user:pw@127.0.0.1/", "http://user@localhost:8080/",
	} {
		assert.True(t, paused(u), u)
	}
	for _, u := range []string{
		"https://example.com/", "https://www.google.com/search?q=local", "https://cdn.example.net/app.js?v=10",
		// (Some web addresses are paused too, and let go: 172.15.0.1,
		// 127.example.com. The patterns stay few, since every request is
		// matched against each.)
		"http://8.8.8.8/", "https://1.1.1.1/dns-query", "http://172.217.0.1/", "https://localization.example.com/",
		"https://img.example.com/a.localhostx.png",
	} {
		assert.False(t, paused(u), u)
	}
}

// TestSocketRulesGrantHostsAsTheBrowserWritesThem: a grant is let through
// in every form the browser may write its host in, before anything local
// is held back.
func TestSocketRulesGrantHostsAsTheBrowserWritesThem(t *testing.T) {
	assert.Equal(t, []string{"*://127.0.0.1:8080/*", `*://[\:\:ffff\:7f00\:1]:8080/*`}, grantPatterns("127.0.0.1:8080"))
	assert.Equal(t, []string{"*://localhost:80/*", "ws://localhost/*", "http://localhost/*", "*://localhost.:80/*",
		"ws://localhost./*", "http://localhost./*"}, grantPatterns("localhost:80"))
	assert.Equal(t, []string{`*://[\:\:1]:*/*`}, grantPatterns("[::1]"))
	assert.Empty(t, grantPatterns("*.localhost"))
	var params struct {
		Rules []netCondition `json:"matchedNetworkConditions"`
	}
	require.NoError(t, json.Unmarshal(socketRulesParams([]string{"127.0.0.1:8080"}), &params))
	first := params.Rules[0]
	assert.Equal(t, "*://127.0.0.1:8080/*", first.URLPattern)
	assert.False(t, first.Offline)
	last := params.Rules[len(params.Rules)-1]
	assert.Equal(t, "ws{s}?://[*]:*/*", last.URLPattern)
	assert.True(t, last.Offline)
	assert.Equal(t, [][2]any{{"127.0.0.1", 8080}, {"[::ffff:7f00:1]", 8080}, {"localhost", 0}}, workerGrants([]string{"127.0.0.1:8080", "LOCALHOST", "*.x"}))
}
