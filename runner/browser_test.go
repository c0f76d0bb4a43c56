package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

// site serves the test pages on loopback.
func site(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	page("/", `<title>Home</title><h1>Home</h1><h2>a</h2><h3>b</h3>
<a href="/p/1">one</a><a href="/p/2">two</a><a href="/next">next</a>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<script>window.pageSecret = "from the main world";</script>`)
	mux.HandleFunc("/p/", func(w http.ResponseWriter, r *http.Request) {
		n := strings.TrimPrefix(r.URL.Path, "/p/")
		fmt.Fprintf(w, "<title>Page %s</title><h1>page %s</h1>", n, n)
	})
	page("/next", `<title>Before</title><a id=go href="/after">go</a>`)
	page("/orders", `<title>Orders</title><table>
<tr><td>Ada Lovelace</td><td>10.00</td><td><button onclick="document.title='edit Ada'">Edit</button></td></tr>
<tr><td>Grace Hopper</td><td>20.00</td><td><button onclick="document.title='edit Grace'">Edit</button></td></tr>
<tr><td>Alan Turing</td><td>30.00</td><td><button onclick="document.title='edit Alan'">Edit</button></td></tr></table>`)
	page("/after", `<title>After</title><script>window.arrived = true;</script>`)
	page("/form", `<title>Form</title>
<label for=f>Card holder</label><input id=f>
<label for=z>Zip</label><input id=z maxlength=5>
<script>
let state = "";
const f = document.getElementById("f");
f.addEventListener("input", e => { if (e.isTrusted) state = f.value; else f.value = state; });
f.addEventListener("blur", () => { f.value = state; });
</script>`)
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<title>Missing</title>no such page")
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/p/moved-here", http.StatusFound)
	})
	page("/dialogs", `<title>Dialogs</title>
<button onclick="document.title = 'alert ' + alert('Saved!')">alert</button>
<button onclick="document.title = 'confirm ' + confirm('Delete the draft?')">confirm</button>
<button onclick="document.title = 'prompt ' + prompt('Your name?', 'nobody')">prompt</button>
<script>addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = ""; });</script>`)
	page("/readers", `<title>Readers</title>
<h1 data-testid=total>Total: 42 €</h1>
<label for=email>Email</label><input id=email value="ada@example.com">
<label for=code>Code</label><input id=code value="kept" disabled>
<label><input type=checkbox checked> Remember me</label>
<a href="/pay" title="Pay now">Pay</a>
<ul><li class=item>a</li><li class=item>b</li><li class=item hidden>c</li></ul>
<p id=later></p>
<script>setTimeout(() => { document.getElementById("later").innerHTML = "<button>Ready</button>"; }, 300);</script>`)
	page("/upload", `<title>Upload</title>
<label for=cv>CV</label><input type=file id=cv style="display:none">
<select multiple aria-label=Toppings><option>Olives</option><option>Basil</option><option>Chili</option></select>`)
	srv := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(srv.Close)
	return srv
}

// countingTabs wraps the reference Tabs and records background tab use.
type countingTabs struct {
	*cdptabs.Tabs
	mu        sync.Mutex
	openBG    map[string]bool
	maxOpen   int
	openOrder []string // IDs of background tabs, in the order they opened
	focused   int
}

func (c *countingTabs) Open(ctx context.Context, run runner.RunInfo, url string, o runner.TabOpenOptions) (runner.TabInfo, error) {
	info, err := c.Tabs.Open(ctx, run, url, o)
	if err == nil && o.Background {
		c.mu.Lock()
		c.openBG[info.ID] = true
		c.maxOpen = max(c.maxOpen, len(c.openBG))
		c.openOrder = append(c.openOrder, info.ID)
		c.mu.Unlock()
	}
	return info, err
}

func (c *countingTabs) Close(ctx context.Context, run runner.RunInfo, id string) error {
	c.mu.Lock()
	delete(c.openBG, id)
	c.mu.Unlock()
	return c.Tabs.Close(ctx, run, id)
}

func (c *countingTabs) Focus(ctx context.Context, run runner.RunInfo, id string) error {
	c.mu.Lock()
	c.focused++
	c.mu.Unlock()
	return c.Tabs.Focus(ctx, run, id)
}

type quietUI struct{}

func (quietUI) Notify(context.Context, runner.RunInfo, string, runner.Level) error { return nil }
func (quietUI) Open(context.Context, runner.RunInfo, string, runner.OpenOptions) error {
	return nil
}

type browserEnv struct {
	m     *runner.Manager
	tabs  *countingTabs
	site  *httptest.Server
	dir   string
	outMu sync.Mutex
	lines []string
}

func newBrowserEnv(t testing.TB) *browserEnv { return newBrowserEnvWith(t, envOptions{}) }

// envOptions vary the browser environment.
type envOptions struct {
	// devtoolsPort attaches to a browser started with a DevTools port (as
	// a user's or an Electron app's would be) instead of launching one
	// over a pipe.
	devtoolsPort bool
	// byEndpoint has the host name the attached browser's endpoint for
	// every tab instead of handing runs its own connection, so the runner
	// connects itself (with devtoolsPort).
	byEndpoint bool
	// config adjusts the Manager's configuration.
	config func(*runner.Config)
	// allowLocal are loopback sites besides the test site (which always
	// is) that every run's tabs may load: Config.AllowLocalSites.
	allowLocal []string
	// tabs is a browser the test started itself, and shuts down itself;
	// nil launches or attaches one as above, which the env shuts down.
	tabs *cdptabs.Tabs
	// site serves the test pages; nil means site(t).
	site *httptest.Server
	// onOutput also receives every output line.
	onOutput func(string)
}

// hostOfURL is a test server's host:port.
func hostOfURL(u string) string { return strings.TrimPrefix(u, "http://") }

// endpointTabs names a tab's browser by its endpoint only.
type endpointTabs struct{ *countingTabs }

func (t endpointTabs) Target(ctx context.Context, run runner.RunInfo, id string) (runner.TabTarget, error) {
	return runner.TabTarget{Endpoint: t.Endpoint(), TargetID: id}, nil
}

// launchBrowser launches headless Chromium for t's tests and shuts it
// down when t ends.
func launchBrowser(t testing.TB) *cdptabs.Tabs {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bt, err := cdptabs.Launch(ctx, launch.Options{Path: testenv.Chromium(t), Args: testenv.ChromiumArgs()})
	require.NoError(t, err)
	t.Cleanup(func() { bt.Shutdown() })
	return bt
}

func newBrowserEnvWith(t testing.TB, o envOptions) *browserEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bt := o.tabs
	switch {
	case bt != nil:
	case o.devtoolsPort:
		var err error
		bt, err = cdptabs.Attach(ctx, testenv.ChromiumWithPort(t))
		require.NoError(t, err)
		t.Cleanup(func() { bt.Shutdown() })
	default:
		bt = launchBrowser(t)
	}
	srv := o.site
	if srv == nil {
		srv = site(t)
	}
	e := &browserEnv{tabs: &countingTabs{Tabs: bt, openBG: map[string]bool{}}, site: srv}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	e.dir = filepath.Join(root, "scripts")
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	store, err := consent.OpenStore(filepath.Join(root, "data", "consent.json"), consent.StoreOptions{})
	require.NoError(t, err)
	cfg := runner.Config{
		DataDir:  filepath.Join(root, "data"),
		CacheDir: testenv.DenoCacheDir(t),
		DenoPath: testenv.Deno(t),
		Host:     runner.Host{UI: quietUI{}, Tabs: e.tabs},
		// The test site plays the host's own pages: every run may load it.
		AllowLocalSites: append([]string{hostOfURL(e.site.URL)}, o.allowLocal...),
		Gate: consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
			return consent.Approve, nil
		})),
		OnEvent: func(ev runner.Event) {
			if ev.Kind == runner.EventOutput {
				e.outMu.Lock()
				e.lines = append(e.lines, ev.Line)
				e.outMu.Unlock()
				if o.onOutput != nil {
					o.onOutput(ev.Line)
				}
			}
		},
	}
	if o.byEndpoint {
		cfg.Host.Tabs = endpointTabs{e.tabs}
	}
	if o.config != nil {
		o.config(&cfg)
	}
	m, err := runner.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	e.m = m
	// The first tab shows the site's home page.
	active, err := bt.Active(ctx, runner.RunInfo{})
	require.NoError(t, err)
	tab, err := bt.Browser().Attach(ctx, active.ID)
	require.NoError(t, err)
	_, err = tab.Goto(ctx, e.site.URL+"/", cdp.Load)
	require.NoError(t, err)
	require.NoError(t, tab.Detach(ctx))
	return e
}

func (e *browserEnv) run(t testing.TB, name, src string) history.Entry {
	t.Helper()
	return e.wait(t, e.startScript(t, name, src))
}

// wait waits up to 2 minutes for run r's entry.
func (e *browserEnv) wait(t testing.TB, r *runner.Run) history.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	return entry
}

func result(t *testing.T, e history.Entry, v any) {
	t.Helper()
	require.Equal(t, history.StateSucceeded, e.State, "reason: %s\noutput:\n%s", e.Reason, e.Output)
	require.NoError(t, json.Unmarshal(e.Result, v), "result %s", e.Result)
}

func TestBrowserEndToEnd(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnv(t)

	t.Run("page-info", func(t *testing.T) {
		entry := e.run(t, "page-info.ts", `// @permissions browser page-js write=page-info.txt
import { context, files, tabs } from "tranquil/automation";
const tab = await tabs.active();
const stats = await tab.evaluate(() => {
  const links = document.querySelectorAll("a").length;
  const images = document.querySelectorAll("img").length;
  const headings = document.querySelectorAll("h1,h2,h3").length;
  return document.title + "\n\nLinks: " + links + "  |  Images: " + images + "  |  Headings: " + headings;
});
await context.result(files.write("page-info.txt", stats));
`)
		var path string
		result(t, entry, &path)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "Home\n\nLinks: 3  |  Images: 2  |  Headings: 3", string(data))
	})

	t.Run("fan-out", func(t *testing.T) {
		var urls []string
		for i := 1; i <= 10; i++ {
			urls = append(urls, fmt.Sprintf("%q", fmt.Sprintf("%s/p/%d", e.site.URL, i)))
		}
		entry := e.run(t, "fanout.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const urls = [`+strings.Join(urls, ",")+`];
async function* pooledMap<T, R>(limit: number, items: T[], fn: (x: T) => Promise<R>): AsyncGenerator<R> {
  const running = new Set<Promise<R>>();
  const results: Promise<R>[] = [];
  for (const item of items) {
    const p = fn(item);
    results.push(p);
    running.add(p);
    p.finally(() => running.delete(p));
    if (running.size >= limit) await Promise.race(running);
  }
  for (const p of results) yield await p;
}
const requested: string[] = [];
const rows = pooledMap(8, urls, async (url) => {
  requested.push(url);
  await using tab = await tabs.open(url, { background: true });
  await tab.waitFor("h1");
  return (await tab.title()) + "\t" + url + "\t" + tab.id;
});
await context.result({ rows: await Array.fromAsync(rows), requested });
`)
		var res struct{ Rows, Requested []string }
		result(t, entry, &res)
		assert.Len(t, res.Rows, 10)
		urlOf := map[string]string{}
		for _, row := range res.Rows {
			f := strings.Split(row, "\t")
			require.Len(t, f, 3)
			urlOf[f[2]] = f[1]
		}
		assert.True(t, strings.HasPrefix(res.Rows[2], fmt.Sprintf("Page 3\t%s/p/3\t", e.site.URL)), res.Rows[2])
		e.tabs.mu.Lock()
		defer e.tabs.mu.Unlock()
		assert.LessOrEqual(t, e.tabs.maxOpen, 4, "background tabs are capped")
		var opened []string
		for _, id := range e.tabs.openOrder {
			opened = append(opened, urlOf[id])
		}
		assert.Equal(t, res.Requested, opened, "FIFO")
		assert.Empty(t, e.tabs.openBG, "every tab is closed")
	})

	t.Run("sequential", func(t *testing.T) {
		entry := e.run(t, "seq.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const seen = [];
for (const n of [1, 2, 3]) {
  await tab.goto("`+e.site.URL+`/p/" + n);
  seen.push([tab.id, await tab.title()]);
}
await context.result(seen);
`)
		var seen [][2]string
		result(t, entry, &seen)
		require.Len(t, seen, 3)
		assert.Equal(t, seen[0][0], seen[2][0], "the tab keeps its id across navigations")
		assert.Equal(t, "Page 3", seen[2][1])
	})

	t.Run("fill", func(t *testing.T) {
		entry := e.run(t, "fill.ts", `// @permissions browser forms sites=127.0.0.1
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/form");
const holder = await tab.fill({ label: "Card holder" }, "Ada Lovelace");
let zip = "no error";
try { await tab.fill({ label: "Zip" }, "1234567"); } catch (e) { zip = (e as { code: string }).code + ":" + (e as { kept?: string }).kept; }
await context.result({ holder: holder.value, zip });
`)
		var res struct{ Holder, Zip string }
		result(t, entry, &res)
		assert.Equal(t, "Ada Lovelace", res.Holder)
		assert.Equal(t, "not_committed:12345", res.Zip)
		require.NotEmpty(t, entry.Actions)
		raw, _ := json.Marshal(entry.Actions)
		assert.NotContains(t, string(raw), "Ada Lovelace", "the action log never holds the value")
		assert.NotContains(t, string(raw), "1234567")
		assert.Equal(t, "goto", entry.Actions[0].Method, "navigations are page actions too")
		assert.Equal(t, "fill", entry.Actions[1].Method)
		assert.Equal(t, "127.0.0.1", entry.Actions[1].Site)
		assert.Equal(t, "ok", entry.Actions[1].Outcome)
		e.tabs.mu.Lock()
		assert.Positive(t, e.tabs.focused, "the host focused the tab before typing")
		e.tabs.mu.Unlock()

		entry = e.run(t, "nofill.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
try { await tab.fill({ label: "Card holder" }, "x"); await context.result("filled"); }
catch (e) { await context.result((e as { code: string }).code); }
`)
		var code string
		result(t, entry, &code)
		assert.Equal(t, "not_granted", code)

		entry = e.run(t, "othersite.ts", `// @permissions browser forms sites=example.com
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
try { await tab.fill({ label: "Card holder" }, "x"); await context.result("filled"); }
catch (e) { await context.result((e as { code: string }).code); }
`)
		result(t, entry, &code)
		assert.Equal(t, "site_not_allowed", code)
		require.NotEmpty(t, entry.Actions)
		assert.Equal(t, "refused", entry.Actions[0].Outcome)
	})

	t.Run("evaluate", func(t *testing.T) {
		entry := e.run(t, "noeval.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
try { await tab.evaluate(() => 1); await context.result("ran"); }
catch (e) { await context.result((e as { code: string }).code); }
`)
		var code string
		result(t, entry, &code)
		assert.Equal(t, "not_granted", code)

		entry = e.run(t, "eval.ts", `// @permissions browser page-js
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/");
await context.result(await tab.evaluate((k: string) => (globalThis as Record<string, unknown>)[k], "pageSecret"));
`)
		var secret string
		result(t, entry, &secret)
		assert.Equal(t, "from the main world", secret)
	})

	t.Run("click then waitForNavigation", func(t *testing.T) {
		entry := e.run(t, "nav.ts", `// @permissions browser forms page-js
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/next");
await tab.click({ selector: "#go" });
await tab.waitForNavigation();
await context.result({ title: await tab.title(), arrived: await tab.evaluate(() => (globalThis as Record<string, unknown>).arrived) });
`)
		var res struct {
			Title   string
			Arrived bool
		}
		result(t, entry, &res)
		assert.Equal(t, "After", res.Title)
		assert.True(t, res.Arrived)
	})

	t.Run("cancel while waiting on a tab", func(t *testing.T) {
		p := filepath.Join(e.dir, "stuck.ts")
		require.NoError(t, os.WriteFile(p, []byte(`// @permissions browser
import { tabs } from "tranquil/automation";
const tab = await tabs.open("`+e.site.URL+`/p/9", { background: true });
const waiting = tab.waitFor("#never", { timeout: 600000 });
// Calls reach the host in the order they were made: once this one is
// answered, the host has the waitFor made before it.
await tab.url();
console.log("waiting on " + tab.id);
await waiting;
`), 0o644))
		r, err := e.m.Start(context.Background(), runner.Request{Script: p})
		require.NoError(t, err)
		e.waitLine(t, r, "waiting on ")
		e.tabs.mu.Lock()
		assert.Len(t, e.tabs.openBG, 1, "the run opened its tab")
		e.tabs.mu.Unlock()
		r.Cancel("stop waiting")
		entry, err := r.Wait(context.Background())
		require.NoError(t, err)
		assert.Equal(t, history.StateCancelled, entry.State)
		e.tabs.mu.Lock()
		assert.Empty(t, e.tabs.openBG, "the run's tabs are closed")
		e.tabs.mu.Unlock()
		assert.Zero(t, e.m.Bridge().Stats().Sessions, "the session is dropped")
	})

}

// TestBrowserPageResults covers what scripts learn from pages without
// running code in them: goto's response, dialogs, the readers, file inputs
// and multiple selects.
func TestBrowserPageResults(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnv(t)

	t.Run("goto response", func(t *testing.T) {
		entry := e.run(t, "status.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await context.result({
  ok: await tab.goto("`+e.site.URL+`/p/1"),
  missing: await tab.goto("`+e.site.URL+`/missing"),
  moved: await tab.goto("`+e.site.URL+`/moved"),
  title: await tab.title(),
});
`)
		var res struct {
			OK, Missing, Moved struct {
				Status int
				URL    string
			}
			Title string
		}
		result(t, entry, &res)
		assert.Equal(t, 200, res.OK.Status)
		assert.Equal(t, 404, res.Missing.Status, "a 404 page loads, and says so")
		assert.Equal(t, e.site.URL+"/missing", res.Missing.URL)
		assert.Equal(t, 200, res.Moved.Status)
		assert.Equal(t, e.site.URL+"/p/moved-here", res.Moved.URL, "the address after the redirect")
		assert.Equal(t, "Page moved-here", res.Title)
	})

	t.Run("composed targets", func(t *testing.T) {
		entry := e.run(t, "orders.ts", `// @permissions browser forms
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/orders");
const out: Record<string, unknown> = {};
try { await tab.click({ role: "button", name: "Edit" }); } catch (err) { out.plain = [(err as { code: string }).code, (err as Error).message]; }
out.count = await tab.count({ role: "button", name: "Edit" });
await tab.click({ role: "button", name: "Edit", within: { role: "row", name: "Grace Hopper" } });
out.within = await tab.title();
await tab.click({ role: "button", name: "Edit", nth: -1 });
out.nth = await tab.title();
await tab.click({ role: "button", within: { role: "row", has: { role: "cell", name: "10.00" } } });
out.has = await tab.title();
out.hasText = await tab.text({ role: "cell", within: { role: "row", hasText: "turing" }, nth: 1 });
try { await tab.click({ role: "button", within: { role: "row", frame: "x" } } as never); } catch (err) { out.frame = (err as Error).name + ": " + (err as Error).message; }
await context.result(out);
`)
		var out struct {
			Plain            []string
			Count            int
			Within, Nth, Has string
			HasText, Frame   string
		}
		result(t, entry, &out)
		require.Len(t, out.Plain, 2)
		assert.Equal(t, "ambiguous", out.Plain[0], "three Edit buttons: never a guess")
		assert.Contains(t, out.Plain[1], "3 elements match")
		assert.Equal(t, 3, out.Count, "count agrees with the lookup")
		assert.Equal(t, "edit Grace", out.Within)
		assert.Equal(t, "edit Alan", out.Nth)
		assert.Equal(t, "edit Ada", out.Has)
		assert.Equal(t, "30.00", out.HasText)
		assert.Contains(t, out.Frame, `TypeError: tab.click: "frame" goes on the outermost target`, "the SDK refuses frame inside within")
	})

	t.Run("dialogs", func(t *testing.T) {
		entry := e.run(t, "dialogs.ts", `// @permissions browser forms
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/dialogs");
const out: Record<string, unknown> = {};
const click = async (name: string) => {
  const t0 = Date.now();
  await tab.click({ role: "button", name });
  return [await tab.title(), Date.now() - t0];
};
for (const name of ["alert", "confirm", "prompt"]) out[name] = await click(name);
const t0 = Date.now();
try { await tab.goto("`+e.site.URL+`/p/1"); out.leave = "left"; } catch (err) { out.leave = (err as { code: string }).code; }
out.leaveMs = Date.now() - t0;
await tab.onDialog({ confirm: "accept", prompt: { accept: true, promptText: "Ada" }, beforeunload: "accept" });
out.confirm2 = await click("confirm");
out.prompt2 = await click("prompt");
out.leave2 = (await tab.goto("`+e.site.URL+`/p/2")).status;
await context.result(out);
`)
		var out map[string]any
		result(t, entry, &out)
		for name, want := range map[string]string{
			"alert": "alert undefined", "confirm": "confirm false", "prompt": "prompt null",
			"confirm2": "confirm true", "prompt2": "prompt Ada",
		} {
			got, _ := out[name].([]any)
			require.Len(t, got, 2, name)
			assert.Equal(t, want, got[0], name)
			// A dialog that held the click up would hold it to the call's
			// 30 s wait; a busy machine takes a second or two.
			assert.Less(t, got[1].(float64), 10000.0, "%s: the dialog did not hold up the click", name)
		}
		assert.Equal(t, "navigation", out["leave"], "a page's beforeunload keeps it by default")
		assert.Less(t, out["leaveMs"].(float64), 10000.0, "refused, not held to the navigation's wait")
		assert.Equal(t, 200.0, out["leave2"], "accepted, the page is left")
		var dialogs []string
		for _, a := range entry.Actions {
			if a.Method == "dialog" {
				dialogs = append(dialogs, a.Target+" "+a.Outcome)
			}
		}
		assert.Equal(t, []string{
			"alert: Saved! dismissed", "confirm: Delete the draft? dismissed", "prompt: Your name? dismissed",
			"beforeunload dismissed",
			"confirm: Delete the draft? accepted", "prompt: Your name? accepted", "beforeunload accepted",
		}, dialogs, "every dialog is in the action log")
		raw, _ := json.Marshal(entry.Actions)
		assert.NotContains(t, string(raw), "Ada", "never the prompt text")

		entry = e.run(t, "nodialogs.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
try { await tab.onDialog("accept"); await context.result("set"); }
catch (err) { await context.result((err as { code: string }).code); }
`)
		var code string
		result(t, entry, &code)
		assert.Equal(t, "not_granted", code, "accepting dialogs is acting on the page: forms")
	})

	t.Run("readers", func(t *testing.T) {
		entry := e.run(t, "readers.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/readers");
await tab.waitFor({ role: "button", name: "Ready" }, { timeout: 5000 });
let evaluate = "ran";
try { await tab.evaluate(() => 1); } catch (err) { evaluate = (err as { code: string }).code; }
await context.result({
  text: await tab.text({ testId: "total" }),
  value: await tab.value({ label: "Email" }),
  disabled: await tab.value({ label: "Code" }),
  href: await tab.attribute({ role: "link", name: "Pay" }, "href"),
  none: await tab.attribute({ role: "link", name: "Pay" }, "data-x"),
  checked: await tab.checked({ label: "Remember me" }),
  visible: [await tab.visible({ role: "button", name: "Ready" }), await tab.visible({ text: "c" })],
  count: await tab.count({ selector: "li.item" }),
  evaluate,
});
`)
		var res map[string]any
		result(t, entry, &res)
		assert.Equal(t, map[string]any{
			"text": "Total: 42 €", "value": "ada@example.com", "disabled": "kept", "href": "/pay", "none": nil,
			"checked": true, "visible": []any{true, false}, "count": 3.0, "evaluate": "not_granted",
		}, res, "readers need only browser; evaluate still needs page-js")
		raw, _ := json.Marshal(entry.Actions)
		for _, secret := range []string{"ada@example.com", "Total: 42", "kept"} {
			assert.NotContains(t, string(raw), secret, "readers are logged without what they read")
		}
		assert.Contains(t, actions(entry), "text:ok@127.0.0.1")

		// sites= comes only with forms or page-js, and holds the readers too.
		entry = e.run(t, "readers-off-sites.ts", `// @permissions browser forms sites=example.com
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
const out: Record<string, string> = {};
for (const [name, f] of Object.entries({
  text: () => tab.text({ testId: "total" }),
  value: () => tab.value({ label: "Email" }),
  attribute: () => tab.attribute({ role: "link", name: "Pay" }, "href"),
  checked: () => tab.checked({ label: "Remember me" }),
  visible: () => tab.visible({ testId: "total" }),
  count: () => tab.count({ selector: "li" }),
  waitFor: () => tab.waitFor({ testId: "total" }, { timeout: 2000 }),
})) {
  try { await f(); out[name] = "read"; } catch (err) { out[name] = (err as { code: string }).code; }
}
await context.result(out);
`)
		var off map[string]string
		result(t, entry, &off)
		for _, k := range []string{"text", "value", "attribute", "checked", "visible", "count", "waitFor"} {
			assert.Equal(t, "site_not_allowed", off[k], k)
		}
		assert.Contains(t, actions(entry), "text:refused@127.0.0.1")
	})

	t.Run("setFiles and select multiple", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, "cv.txt"), []byte("my cv"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, "other.txt"), []byte("not granted"), 0o644))
		entry := e.run(t, "upload.ts", `// @permissions browser forms read=cv.txt
import { context, NotGrantedError, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+e.site.URL+`/upload");
const out: Record<string, unknown> = {};
await tab.setFiles({ label: "CV" }, "cv.txt");
out.file = await tab.value({ label: "CV" });
for (const p of ["other.txt", "../cv.txt", "/etc/hostname", "missing/../../scripts/other.txt"]) {
  try { await tab.setFiles({ label: "CV" }, p); out[p] = "set"; }
  catch (err) { out[p] = (err as { code: string }).code + (err instanceof NotGrantedError ? ":" + err.permission : ""); }
}
out.after = await tab.value({ label: "CV" });
out.labels = await tab.select({ role: "listbox", name: "Toppings" }, ["Olives", "Chili"]);
out.selected = await tab.count({ selector: "option:checked" });
await context.result(out);
`)
		var out map[string]any
		result(t, entry, &out)
		assert.Equal(t, `C:\fakepath\cv.txt`, out["file"])
		assert.Equal(t, "not_granted:read=other.txt", out["other.txt"], "a file beside the script, not granted")
		assert.Equal(t, "not_granted:read=../cv.txt", out["../cv.txt"])
		assert.Equal(t, "not_granted:read=/etc/hostname", out["/etc/hostname"])
		assert.Equal(t, "not_granted:read=missing/../../scripts/other.txt", out["missing/../../scripts/other.txt"])
		assert.Equal(t, `C:\fakepath\cv.txt`, out["after"], "a refused path changes nothing")
		assert.Equal(t, []any{"Olives", "Chili"}, out["labels"])
		assert.Equal(t, 2.0, out["selected"])
		raw, _ := json.Marshal(entry.Actions)
		assert.NotContains(t, string(raw), "cv.txt", "the log never holds the paths")
		assert.Contains(t, actions(entry), "setFiles:not_granted@")
	})
}

// TestDevToolsEndpointUnreachableFromDeno scans loopback from a script for
// the DevTools endpoint of a browser that has one (attached, as a user's or
// an Electron app's would be): it is never reachable.
func TestDevToolsEndpointUnreachableFromDeno(t *testing.T) {
	e := newBrowserEnvWith(t, envOptions{devtoolsPort: true})
	{
		port := e.tabs.Port()
		lo, hi := max(1, port-1000), min(65535, port+1000)
		entry := e.run(t, "scan.ts", fmt.Sprintf(`// @permissions net=127.0.0.1,localhost
import { context } from "tranquil/automation";
const open: number[] = [];
const devtools: number[] = [];
for (let p = %d; p <= %d; p++) {
  try {
    const c = await Deno.connect({ hostname: "127.0.0.1", port: p });
    c.close();
    open.push(p);
    try {
      const r = await fetch("http://127.0.0.1:" + p + "/json/version", { signal: AbortSignal.timeout(500) });
      if ((await r.text()).includes("webSocketDebuggerUrl")) devtools.push(p);
    } catch { /* not HTTP */ }
  } catch { /* closed or denied */ }
}
let direct = "reached";
try { (await Deno.connect({ hostname: "localhost", port: %d })).close(); } catch (e) { direct = (e as Error).name; }
await context.result({ devtools, direct, openHasDevtools: open.includes(%d) });
`, lo, hi, port, port))
		var res struct {
			Devtools        []int
			Direct          string
			OpenHasDevtools bool
		}
		result(t, entry, &res)
		// Browsers of other tests may run on this machine; the host's own
		// endpoint is the one that must stay out of reach.
		assert.NotContains(t, res.Devtools, port, "the host's DevTools endpoint did not answer")
		assert.Equal(t, "NotCapable", res.Direct)
		assert.False(t, res.OpenHasDevtools)
	}
}
