package runner_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// localService is another service on this computer, the kind a script
// with only `browser` must not read through the user's browser: it serves
// a secret and records every request that reached it.
type localService struct {
	url  string // http://127.0.0.1:PORT
	port string
	mu   sync.Mutex
	hits []string
}

func newLocalService(t *testing.T) *localService {
	t.Helper()
	s := &localService{}
	srv := testenv.Site(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			return // the browser's own request for a page it showed
		}
		s.mu.Lock()
		s.hits = append(s.hits, r.Host+r.URL.RequestURI())
		s.mu.Unlock()
		// It answers every page that asks, as a careless local API does.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>admin</title><p id=s>the secret</p>`)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	_, s.port, _ = strings.Cut(hostOfURL(srv.URL), ":")
	return s
}

func (s *localService) reached() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hits...)
}

// launchPages serves, for each target address, pages that take the tab
// there by themselves: a link, a form post, a redirect, page code setting
// location, and a frame. The host allows every run to load these pages;
// it does not allow the targets.
func launchPages(t *testing.T, targets []string) string {
	t.Helper()
	mux := http.NewServeMux()
	for i, target := range targets {
		page := func(kind, body string) {
			mux.HandleFunc(fmt.Sprintf("/%s/%d", kind, i), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, body)
			})
		}
		page("link", `<title>link</title><a id=go href="`+target+`/link?token=s3cr3t">go</a>`)
		page("form", `<title>form</title><form method=post action="`+target+`/form?token=s3cr3t"><input name=x value=y><button id=go>send</button></form>`)
		page("script", `<title>script</title><script>addEventListener("load", () => setTimeout(() => { location.href = "`+target+`/location?token=s3cr3t"; }, 0));</script>`)
		page("frame", `<title>frame</title><iframe src="`+target+`/frame?token=s3cr3t"></iframe>`)
		mux.HandleFunc(fmt.Sprintf("/redirect/%d", i), func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target+"/redirect?token=s3cr3t", http.StatusFound)
		})
	}
	srv := testenv.Site(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// hostileScript tries every way into each target from a tab of its own
// and reports, per way, the error code it met or what it read.
const hostileScript = `
import { context, tabs } from "tranquil/automation";
const targets: string[] = TARGETS;
const pages = PAGES;
const out: Record<string, string> = {};
const code = (err: unknown) => (err as { code?: string }).code ?? String(err);
const tab = await tabs.open(pages + "/frame/0");
// The page has sent the tab on once the tab's address is another (the
// browser's error page for the refused request), looked at a bounded
// number of times.
async function left(from: string) {
  for (let i = 0; i < 400 && await tab.url() === from; i++) await new Promise((r) => setTimeout(r, 25));
  return await tab.url();
}
async function read() {
  try { return "read " + await tab.text({ selector: "#s" }); } catch (err) { return code(err); }
}
for (const [i, target] of targets.entries()) {
  try { await tab.goto(target + "/goto?token=s3cr3t"); out["goto " + i] = await read(); }
  catch (err) { out["goto " + i] = code(err); out["goto message " + i] = (err as Error).message; }
  try { const t = await tabs.open(target + "/open?token=s3cr3t"); out["open " + i] = "opened " + await t.url(); }
  catch (err) { out["open " + i] = code(err); }
  try { await tab.goto(pages + "/redirect/" + i); out["redirect " + i] = await read(); }
  catch (err) { out["redirect " + i] = code(err); }
  for (const kind of ["link", "form"]) {
    await tab.goto(pages + "/" + kind + "/" + i);
    try { await tab.click({ selector: "#go" }); } catch (err) { out[kind + " click " + i] = code(err); }
    out[kind + " left " + i] = await left(pages + "/" + kind + "/" + i);
    out[kind + " " + i] = await read();
  }
  await tab.goto(pages + "/script/" + i);
  out["script left " + i] = await left(pages + "/script/" + i);
  out["script " + i] = await read();
  await tab.goto(pages + "/frame/" + i);
  out["frame " + i] = await tab.evaluate(() => document.title);
}
// Other spellings of this computer, which the browser reads as addresses.
for (const u of ALIASES) {
  try { await tab.goto(u); out[u] = await read(); } catch (err) { out[u] = code(err); }
}
await context.result(out);
`

func TestHostileLocalServicesStayOutOfReach(t *testing.T) {
	t.Parallel() // see parallel_test.go
	secret := newLocalService(t)
	targets := []string{secret.url, "http://localhost:" + secret.port}
	pages := launchPages(t, targets)
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(pages)}})
	quoted := make([]string, len(targets))
	for i, u := range targets {
		quoted[i] = fmt.Sprintf("%q", u)
	}
	var aliases []string
	for _, host := range []string{"0x7f000001", "2130706433", "127.1", "127.0.0.2", "[::ffff:127.0.0.1]", "0.0.0.0", "[::1]", "app.localhost"} {
		aliases = append(aliases, fmt.Sprintf("%q", "http://"+host+":"+secret.port+"/alias?token=s3cr3t"))
	}
	src := strings.NewReplacer("TARGETS", "["+strings.Join(quoted, ",")+"]", "PAGES", fmt.Sprintf("%q", pages),
		"ALIASES", "["+strings.Join(aliases, ",")+"]").Replace(hostileScript)

	entry := e.run(t, "hostile-local.ts", "// @permissions browser forms page-js\n"+src)
	var out map[string]string
	result(t, entry, &out)
	defer func() {
		if t.Failed() {
			t.Logf("what the script met: %v", out)
		}
	}()
	for i, host := range []string{"127.0.0.1:" + secret.port, "localhost:" + secret.port} {
		n := fmt.Sprint(i)
		assert.Equal(t, "navigation_blocked", out["goto "+n], "goto %s", host)
		assert.Contains(t, out["goto message "+n], "add sites="+host+" to reach a service on this computer")
		assert.Equal(t, "navigation_blocked", out["open "+n], "tabs.open %s", host)
		assert.Equal(t, "navigation_blocked", out["redirect "+n], "a redirect from an allowed page to %s", host)
		for _, kind := range []string{"link", "form", "script"} {
			assert.NotContains(t, out[kind+" left "+n], pages, "%s to %s: the page sent the tab on", kind, host)
			assert.NotContains(t, out[kind+" "+n], "read", "%s to %s: nothing was read", kind, host)
			if c, clicked := out[kind+" click "+n]; clicked {
				assert.Equal(t, "navigation_blocked", c, "%s to %s: a click that reports its navigation", kind, host)
			}
		}
		assert.Equal(t, "frame", out["frame "+n])
	}
	for _, u := range aliases {
		u, _ = strconv.Unquote(u)
		assert.Equal(t, "navigation_blocked", out[u], u)
	}
	assert.Empty(t, secret.reached(), "the other service received nothing")

	// The action log names each refused navigation by path, with the
	// length of its query, never the query's text.
	refused := map[string]bool{}
	for _, a := range entry.Actions {
		assert.NotContains(t, a.Target, "s3cr3t", "%+v", a)
		if a.Outcome == "navigation_blocked" {
			refused[a.Method+" "+a.Target] = true
		}
	}
	for _, target := range targets {
		for _, want := range []string{
			"goto " + target + "/goto?… (12 bytes of query)",
			"navigate " + target + "/open?… (12 bytes of query)",
			"navigate " + target + "/redirect?… (12 bytes of query)",
			"navigate " + target + "/link?… (12 bytes of query)",
			"navigate " + target + "/form?… (12 bytes of query)",
			"navigate " + target + "/location?… (12 bytes of query)",
			"navigate " + target + "/frame?… (12 bytes of query)",
		} {
			assert.True(t, refused[want], "the log holds %q; refusals: %v", want, keys(refused))
		}
	}

	// The same ways in, each granted by a sites= entry naming the host;
	// a wildcard grants nothing.
	entry = e.run(t, "granted-local.ts", fmt.Sprintf(`// @permissions browser sites=127.0.0.1:%[1]s,localhost,%[2]s
import { context, tabs } from "tranquil/automation";
const out: Record<string, string> = {};
const tab = await tabs.active();
for (const u of [%[3]q, %[4]q]) {
  await tab.goto(u + "/granted");
  out[u] = await tab.text({ selector: "#s" });
}
await context.result(out);
`, secret.port, hostOfURL(pages), targets[0], targets[1]))
	var granted map[string]string
	result(t, entry, &granted)
	assert.Equal(t, map[string]string{targets[0]: "the secret", targets[1]: "the secret"}, granted)
	assert.ElementsMatch(t, []string{"127.0.0.1:" + secret.port + "/granted", "localhost:" + secret.port + "/granted"}, secret.reached())

	entry = e.run(t, "wildcard-local.ts", fmt.Sprintf(`// @permissions browser sites=*.localhost,127.0.0.1:%[1]s
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
let res = "loaded";
try { await tab.goto("http://app.localhost:%[2]s/wild"); } catch (err) { res = (err as { code?: string }).code ?? String(err); }
await context.result(res);
`, strings.TrimPrefix(hostOfURL(pages), "127.0.0.1:"), secret.port))
	var wild string
	result(t, entry, &wild)
	assert.Equal(t, "navigation_blocked", wild, "*.localhost names no host")
	assert.Len(t, secret.reached(), 2, "the wildcard reached nothing")
}

// A host's always-allowed local sites name hosts exactly: a wildcard, a
// URL or a bad port is refused when the Manager is made, not at the first
// tab.
func TestAllowLocalSitesNameHosts(t *testing.T) {
	for _, bad := range []string{"*.localhost", "http://127.0.0.1:8080/", "localhost:0", "127.0.0.1:99999"} {
		_, err := runner.New(runner.Config{DataDir: t.TempDir(), AllowLocalSites: []string{bad}})
		require.ErrorIs(t, err, cdp.ErrEndpoint, bad)
		assert.ErrorContains(t, err, "runner: AllowLocalSites", bad)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
