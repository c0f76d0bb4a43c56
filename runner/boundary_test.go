package runner_test

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// hits counts requests a loopback server received, by Host and path.
type hits struct {
	mu   sync.Mutex
	seen []string
}

func (h *hits) add(r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Host+r.URL.Path)
	h.mu.Unlock()
}

func (h *hits) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// secretServer is a loopback endpoint the host denies every script and
// page; it records anything that reaches it.
func secretServer(t testing.TB) (*httptest.Server, *hits) {
	h := &hits{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.add(r)
		fmt.Fprint(w, "secret")
	}))
	t.Cleanup(srv.Close)
	return srv, h
}

// actions returns the outcomes of the entry's action log as
// "method:outcome@site".
func actions(e history.Entry) []string {
	var out []string
	for _, a := range e.Actions {
		out = append(out, a.Method+":"+a.Outcome+"@"+a.Site)
	}
	return out
}

func TestBoundaryNavigationAnywhere(t *testing.T) {
	t.Parallel() // see parallel_test.go
	secret, secretHits := secretServer(t)
	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) {
		c.DenyLoopback = []string{strings.TrimPrefix(secret.URL, "http://")}
	}})
	blocked := []string{
		"javascript:document.title='pwned'",
		"data:text/html,<script>document.title='pwned'</script>",
		"file:///etc/passwd",
		"file:///",
		"chrome://version",
		"view-source:" + e.site.URL + "/",
		"devtools://devtools/bundled/inspector.html",
		"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x.html",
		"blob:" + e.site.URL + "/00000000-0000-0000-0000-000000000000",
		"filesystem:" + e.site.URL + "/temporary/x",
		"about:version",
		secret.URL + "/via-goto",
		strings.Replace(secret.URL, "127.0.0.1", "localhost", 1) + "/via-name",
		strings.Replace(secret.URL, "127.0.0.1", "0x7f000001", 1) + "/via-hex",
		strings.Replace(secret.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1) + "/via-mapped",
		"http://" + e.m.Bridge().Addr() + "/",
		strings.Replace(e.m.Bridge().URL(), "ws://", "http://", 1),
	}
	var list []string
	for _, u := range blocked {
		list = append(list, fmt.Sprintf("%q", u))
	}
	entry := e.run(t, "anywhere.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/p/1");
const out: Record<string, string> = {};
for (const u of [`+strings.Join(list, ",")+`]) {
  try { await tab.goto(u, { timeout: 5000 }); out[u] = "navigated to " + await tab.url(); }
  catch (err) { out[u] = (err as { code?: string }).code ?? String(err); }
}
for (const u of [`+strings.Join(list, ",")+`]) {
  try { const t = await tabs.open(u, { timeout: 5000 }); out["open " + u] = "opened " + await t.url(); await t.close(); }
  catch (err) { out["open " + u] = (err as { code?: string }).code ?? String(err); }
}
out.title = await tab.title();
await context.result(out);
`)
	var out map[string]string
	result(t, entry, &out)
	for _, u := range blocked {
		assert.Equal(t, "navigation_blocked", out[u], "goto %s", u)
		assert.Equal(t, "navigation_blocked", out["open "+u], "tabs.open %s", u)
	}
	assert.NotEqual(t, "pwned", out["title"], "no blocked address ran code in the page")
	assert.Empty(t, secretHits.list(), "the denied endpoint received nothing")
	assert.Contains(t, actions(entry), "goto:navigation_blocked@")
}

func TestBoundaryNavigationWithoutGoto(t *testing.T) {
	t.Parallel() // see parallel_test.go
	secret, secretHits := secretServer(t)
	// Pages that go to the denied endpoint by themselves: a link, a redirect,
	// a meta refresh, a form post, a frame, a popup, script setting location,
	// a fetch and a beacon.
	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
		})
	}
	target := secret.URL
	page("/link", `<title>link</title><a id=go href="`+target+`/link">go</a>`)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/redirect", http.StatusFound)
	})
	page("/meta", `<title>meta</title><meta http-equiv="refresh" content="0;url=`+target+`/meta">`)
	page("/form", `<title>form</title><form method=post action="`+target+`/form"><button id=go>send</button></form>`)
	page("/frame", `<title>frame</title><iframe src="`+target+`/frame"></iframe><iframe src="/redirect"></iframe>`)
	page("/popup", `<title>popup</title><script>window.open("`+target+`/popup")</script>`)
	page("/script", `<title>script</title><script>
fetch("`+target+`/fetch").catch(() => {});
navigator.sendBeacon("`+target+`/beacon", "x");
new Image().src = "`+target+`/image";
setTimeout(() => { location.href = "`+target+`/location"; }, 50);
</script>`)
	site := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(site.Close)

	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) {
		c.DenyLoopback = []string{strings.TrimPrefix(secret.URL, "http://")}
	}, allowLocal: []string{hostOfURL(site.URL)}})
	entry := e.run(t, "without-goto.ts", `// @permissions browser forms
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const base = "`+site.URL+`";
const out: Record<string, string> = {};
for (const p of ["/link", "/form"]) {
  await tab.goto(base + p);
  try { await tab.click({ selector: "#go" }); } catch (err) { out[p + " click"] = String(err); }
  await new Promise((r) => setTimeout(r, 500));
  out[p] = await tab.url();
}
for (const p of ["/redirect", "/meta", "/frame", "/popup", "/script"]) {
  try { await tab.goto(base + p, { timeout: 5000 }); } catch (err) { out[p + " goto"] = (err as { code?: string }).code ?? String(err); }
  await new Promise((r) => setTimeout(r, 700));
  out[p] = await tab.url();
}
await context.result(out);
`)
	var out map[string]string
	result(t, entry, &out)
	assert.Equal(t, "navigation_blocked", out["/redirect goto"], "a redirect to the endpoint is the goto's refusal")
	// A refused navigation leaves the browser's error page under the
	// refused address; what counts is that nothing reached the endpoint.
	assert.Empty(t, secretHits.list(), "the denied endpoint received nothing")
	assert.Contains(t, actions(entry), "navigate:navigation_blocked@127.0.0.1", "refusals in the run's tab are in its action log")
}

func TestBoundaryDevToolsEndpointOfAnAttachedBrowser(t *testing.T) {
	e := newBrowserEnvWith(t, envOptions{devtoolsPort: true})
	port := e.tabs.Port()
	require.NotZero(t, port)
	var list []string
	for _, host := range []string{"127.0.0.1", "localhost", "0x7f000001", "2130706433", "127.1", "0.0.0.0", "[::1]", "[::ffff:7f00:1]", "foo.localhost"} {
		for _, path := range []string{"/json/version", "/json/list", "/"} {
			list = append(list, fmt.Sprintf("%q", fmt.Sprintf("http://%s:%d%s", host, port, path)))
		}
	}
	entry := e.run(t, "devtools.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const out: Record<string, string> = {};
for (const u of [`+strings.Join(list, ",")+`]) {
  try { await tab.goto(u, { timeout: 5000 }); out[u] = "navigated: " + await tab.title(); }
  catch (err) { out[u] = (err as { code?: string }).code ?? String(err); }
}
await context.result(out);
`)
	var out map[string]string
	result(t, entry, &out)
	require.NotEmpty(t, out)
	for u, v := range out {
		assert.Contains(t, []string{"navigation_blocked", "navigation"}, v, "%s must not load", u)
	}
	assert.Equal(t, "navigation_blocked", out[fmt.Sprintf("http://127.0.0.1:%d/json/version", port)])
	assert.Equal(t, "navigation_blocked", out[fmt.Sprintf("http://localhost:%d/json/version", port)])
}

func TestBoundarySitesPerDocument(t *testing.T) {
	t.Parallel() // see parallel_test.go
	// One server under two names: 127.0.0.1 is allowed, localhost is not.
	h := &hits{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.add(r)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>%s</title><label for=f>Name</label><input id=f><h1>%s</h1>`, r.Host, r.URL.Path)
	})
	srv := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	allowed := "http://127.0.0.1:" + port
	other := "http://localhost:" + port

	// The host lets every run load the other name, so the document moves
	// there and only sites= keeps the script off it.
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{"localhost:" + port}})
	entry := e.run(t, "sites.ts", `// @permissions browser page-js forms sites=127.0.0.1
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+allowed+`/start");
const out: Record<string, string> = {};
const code = (err: unknown) => (err as { code?: string }).code ?? String(err);
// The function moves its own page to another site and never settles, so
// its realm is destroyed and the call would be made again in the next
// document: there it must be refused, not run.
try {
  await tab.evaluate((next: string) => {
    fetch("/ran-" + location.host.split(":")[0]);
    location.href = next;
    return new Promise(() => {});
  }, "`+other+`/elsewhere");
  out.evaluate = "ran";
} catch (err) { out.evaluate = code(err); }
await new Promise((r) => setTimeout(r, 300));
out.url = await tab.url();
for (const [name, f] of Object.entries({
  evaluate2: () => tab.evaluate(() => document.title),
  fill: () => tab.fill({ label: "Name" }, "x"),
  waitFor: () => tab.waitFor("h1", { timeout: 2000 }),
  screenshot: () => tab.screenshot(),
  press: () => tab.press("a"),
})) {
  try { await f(); out[name] = "ran"; } catch (err) { out[name] = code(err); }
}
await context.result(out);
`)
	var out map[string]string
	result(t, entry, &out)
	assert.Equal(t, "site_not_allowed", out["evaluate"], "the retry in the next document is refused")
	assert.Contains(t, out["url"], "localhost")
	for _, k := range []string{"evaluate2", "fill", "waitFor", "screenshot", "press"} {
		assert.Equal(t, "site_not_allowed", out[k], k)
	}
	for _, p := range h.list() {
		assert.NotContains(t, p, "ran-localhost", "the function never ran on the other site")
	}
	assert.Contains(t, h.list(), "127.0.0.1:"+port+"/ran-127.0.0.1", "it ran once on the allowed site")
	acts := actions(entry)
	assert.Contains(t, acts, "evaluate:refused@localhost", "the log names the site the call was refused on")
	assert.NotContains(t, acts, "evaluate:ok@localhost")
}

func TestBoundaryDownloadsDenied(t *testing.T) {
	t.Parallel() // see parallel_test.go
	name := fmt.Sprintf("tranquil-download-%d.txt", time.Now().UnixNano())
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>dl</title><a id=dl href="/file" download>get</a>`)
	})
	served := make(chan struct{}, 4)
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		fmt.Fprint(w, "written by a script")
		served <- struct{}{}
	})
	srv := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(srv.Close)
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}})
	entry := e.run(t, "download.ts", `// @permissions browser forms
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
await tab.click({ selector: "#dl" });
await new Promise((r) => setTimeout(r, 1500));
try { await tab.goto("`+srv.URL+`/file", { timeout: 3000 }); } catch { /* a download is no navigation */ }
await new Promise((r) => setTimeout(r, 1500));
await context.result("done");
`)
	var res string
	result(t, entry, &res)
	home, _ := os.UserHomeDir()
	var found []string
	for _, dir := range []string{filepath.Join(home, "Downloads"), home, os.TempDir()} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return filepath.SkipDir
			}
			if d.IsDir() && p != dir && strings.Count(strings.TrimPrefix(p, dir), string(filepath.Separator)) > 3 {
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), name) {
				found = append(found, p)
			}
			return nil
		})
	}
	assert.Empty(t, found, "no download was written")
}

func TestBoundaryTabsNotTheRuns(t *testing.T) {
	t.Parallel() // see parallel_test.go
	// Four foreground slots: a run's share is two of them.
	e := newBrowserEnvWith(t, envOptions{config: func(c *runner.Config) { c.MaxForegroundTabs = 4 }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := e.tabs.All(ctx, runner.RunInfo{})
	require.NoError(t, err)
	entry := e.run(t, "tabs.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const out: Record<string, unknown> = {};
const user = await tabs.active();
try { await user.close(); out.closeUsers = "closed"; } catch (err) { out.closeUsers = (err as { code?: string }).code; }
for (const t of await tabs.all()) {
  try { await t.close(); out.closeAll = "closed"; } catch (err) { out.closeAll = (err as { code?: string }).code; }
}
// Foreground opens wait for one of the run's two slots: the third gives up.
const a = await tabs.open("`+e.site.URL+`/p/1");
const b = await tabs.open("`+e.site.URL+`/p/2");
try { await tabs.open("`+e.site.URL+`/p/3", { timeout: 1000 }); out.third = "opened"; } catch (err) { out.third = (err as { code?: string }).code; }
await a.close();
const c = await tabs.open("`+e.site.URL+`/p/3");
out.afterClose = await c.title();
await b.close(); await c.close();
await context.result(out);
`)
	var out map[string]any
	result(t, entry, &out)
	assert.Equal(t, "not_granted", out["closeUsers"])
	assert.Equal(t, "not_granted", out["closeAll"])
	assert.Equal(t, "timeout", out["third"], "a third foreground tab waits for a slot")
	assert.Equal(t, "Page 3", out["afterClose"])
	after, err := e.tabs.All(ctx, runner.RunInfo{})
	require.NoError(t, err)
	assert.Len(t, after, len(before), "the user's tabs are all still open")
}

// TestRunnerSpeaksNoCDP keeps the protocol in cdp: runner drives tabs only
// through cdp's page-action path.
func TestRunnerSpeaksNoCDP(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range af.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			assert.False(t, strings.HasPrefix(p, "github.com/mafredri/cdp"), "%s imports %s", f, p)
			assert.NotEqual(t, "github.com/coder/websocket", p, "%s imports %s", f, p)
		}
	}
}
