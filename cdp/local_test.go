package cdp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"

	"github.com/tranquil/automation/errcode"
)

func TestNavigationTargetKeepsNoQuery(t *testing.T) {
	for raw, want := range map[string]string{
		"https://example.com/login?token=s3cr3t&x=1#frag": "https://example.com/login?… (16 bytes of query)",
		"http://127.0.0.1:8080/":                          "http://127.0.0.1:8080/",
		"http://127.0.0.1:8080":                           "http://127.0.0.1:8080",
		"http://h/p?":                                     "http://h/p?… (0 bytes of query)",
		"http://h/a%20b":                                  "http://h/a%20b",
		"data:text/html,secret":                           "data:",
		"%zz":                                             "(malformed address)",
	} {
		assert.Equal(t, want, navigationTarget(raw), raw)
	}
	long := navigationTarget("http://h/" + strings.Repeat("a", 1000))
	assert.Less(t, len(long), 260, "a long path is cut")
}

// The grant rules are sitepolicy's; these check that cdp's wrappers keep
// its answers and cdp's error for a bad AllowLocal entry.
func TestLocalGrantWrappers(t *testing.T) {
	assert.Equal(t, "add sites=127.0.0.1:8080 to reach a service on this computer", LocalGrant("http://127.0.0.1:8080/x", nil, nil))
	assert.Empty(t, LocalGrant("http://127.0.0.1:8080/x", []string{"127.0.0.1:8080"}, nil))
	require.NoError(t, CheckAllowLocal([]string{"127.0.0.1", "localhost:8080"}))
	assert.ErrorIs(t, CheckAllowLocal([]string{"localhost", "*.localhost"}), ErrEndpoint)
}

// fakeResolver answers from a table and records every name asked: tests
// send no lookup off this computer.
type fakeResolver struct {
	mu    sync.Mutex
	addrs map[string]string
	asked []string
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	a, ok := r.addrs[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// TestLocalRefusalOfNames grades names by where they resolve, only for the
// frames of guarded tabs, and never looks a name up for anyone else.
func TestLocalRefusalOfNames(t *testing.T) {
	r := &fakeResolver{addrs: map[string]string{"rebind.example": "127.0.0.1", "lan.example": "10.0.0.7", "web.example": "93.184.216.34"}}
	guarded := &Tab{frames: newFrameTree(nil, "F"), opts: TabOptions{Sites: []string{"named.example", "*.wild.example"}}}
	r.addrs["named.example"] = "127.0.0.1"
	r.addrs["a.wild.example"] = "127.0.0.1"
	g := &Gateway{tabs: map[*Tab]struct{}{}, resolver: r, local: []string{"127.0.0.1:5000"}, refused: map[string]refusal{}}
	ctx := context.Background()

	// No guarded tab: nothing is looked up, nothing refused.
	assert.Empty(t, g.localRefusal(ctx, "F", "http://rebind.example:8080/x"))
	assert.Empty(t, r.asked, "no name is looked up while no tab is guarded")

	g.tabs[guarded] = struct{}{}
	for raw, want := range map[string]string{
		"http://rebind.example:8080/x": "add sites=rebind.example:8080 to reach a service on this computer",
		"http://lan.example/":          "add sites=lan.example to reach a device on your local network",
		"http://web.example/":          "",
		"http://unknown.example/":      "", // the browser's own lookup fails the same way
		"http://named.example/":        "",
		"http://a.wild.example/":       "add sites=a.wild.example to reach a service on this computer",
		"http://127.0.0.1:5000/":       "",
		"http://127.0.0.1:5001/":       "add sites=127.0.0.1:5001 to reach a service on this computer",
		"http://[::ffff:7f00:1]:5000/": "", // 127.0.0.1 mapped into IPv6: the same socket
		"http://[::ffff:7f00:1]:5001/": "add sites=127.0.0.1:5001 to reach a service on this computer",
		"http://169.254.169.254/meta":  "add sites=169.254.169.254 to reach a device on your local network",
		"http://93.184.216.34/":        "",
	} {
		assert.Equal(t, want, g.localRefusal(ctx, "F", raw), raw)
	}
	assert.NotContains(t, r.asked, "127.0.0.1", "an address is never looked up")
}

// localEnv is a browser of its own with a guarded connection: the shared
// site (127.0.0.1) always allowed, and a second loopback service on
// another port that records what reaches it.
type localEnv struct {
	p       *testBrowser
	g       *Gateway
	secret  *httptest.Server
	mu      sync.Mutex
	hits    []string
	log     []Action
	changed chan struct{} // closed and replaced at each log entry
}

func newLocalEnv(t *testing.T, ctx context.Context) *localEnv {
	t.Helper()
	e := &localEnv{changed: make(chan struct{})}
	e.secret = testenv.Site(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			return // the browser's own request for a page it showed
		}
		e.mu.Lock()
		e.hits = append(e.hits, r.URL.RequestURI())
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>secret</title><p id=s>the secret</p>`)
	}))
	t.Cleanup(e.secret.Close)
	e.p, e.g = startGuarded(t, ctx, site.URL)
	return e
}

func (e *localEnv) tab(t *testing.T, ctx context.Context, opts TabOptions) *Tab {
	t.Helper()
	return openGuarded(t, ctx, e.p, e.g, opts, func(a Action) {
		e.mu.Lock()
		e.log = append(e.log, a)
		close(e.changed)
		e.changed = make(chan struct{})
		e.mu.Unlock()
	})
}

// startGuarded starts a browser of its own with a gateway that lets every
// guarded tab load the site at allowed; both end with the test.
func startGuarded(t *testing.T, ctx context.Context, allowed string) (*testBrowser, *Gateway) {
	t.Helper()
	chromium := testenv.Chromium(t)
	p, err := startChromium(ctx, chromium, true, nil)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	g, err := Guard(ctx, p.Browser(), PagePolicy{AllowLocal: []string{strings.TrimPrefix(allowed, "http://")}})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return p, g
}

// openGuarded opens a blank tab guarded by g, logging to log, closed when
// the test ends.
func openGuarded(t *testing.T, ctx context.Context, p *testBrowser, g *Gateway, opts TabOptions, log func(Action)) *Tab {
	t.Helper()
	opts.Gateway, opts.Log = g, log
	tab, err := p.Browser().NewTabWith(ctx, "", opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(ctx)
	})
	return tab
}

func (e *localEnv) reached() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.hits...)
}

func (e *localEnv) refusals() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, a := range e.log {
		if a.Outcome == string(errcode.NavigationBlocked) {
			out = append(out, a.Method+" "+a.Target)
		}
	}
	return out
}

// waitRefusal waits until the log holds the refusal want ("method
// target"): each is logged when the gateway fails the request, which is
// the event the test waits on.
func (e *localEnv) waitRefusal(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	for {
		e.mu.Lock()
		ch := e.changed
		e.mu.Unlock()
		if slices.Contains(e.refusals(), want) {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no refusal %q; refusals: %v", want, e.refusals())
		}
	}
}

func TestGuardedTabStaysOffLocalAddresses(t *testing.T) {
	ctx := tctx(t, 90*time.Second)
	e := newLocalEnv(t, ctx)
	secretHost := strings.TrimPrefix(e.secret.URL, "http://")
	_, secretPort, _ := strings.Cut(secretHost, ":")
	tab := e.tab(t, ctx, TabOptions{})

	// The always-allowed site loads.
	start := serve("/local-start", `<title>start</title>`)
	_, err := tab.Goto(ctx, start, Load)
	require.NoError(t, err)

	// Another service on this computer, by address or by name: refused,
	// naming the grant.
	for _, u := range []string{e.secret.URL + "/goto?token=s3cr3t", "http://localhost:" + secretPort + "/goto", siteOther + "/local-start"} {
		_, err := tab.Goto(ctx, u, Load)
		var nb *NavigationBlockedError
		require.ErrorAs(t, err, &nb, u)
		host := strings.TrimPrefix(u, "http://")
		host, _, _ = strings.Cut(host, "/")
		assert.Equal(t, "add sites="+host+" to reach a service on this computer", nb.Reason, u)
		assert.Equal(t, errcode.NavigationBlocked, errcode.Of(err))
	}

	// Page-made navigations: a frame, page code, a redirect of an allowed page.
	pages.Once("/local-redirect", http.RedirectHandler(e.secret.URL+"/redirect", http.StatusFound))
	frame := serve("/local-frame-"+secretPort, `<title>frame</title><iframe src="`+e.secret.URL+`/frame"></iframe>`)
	_, err = tab.Goto(ctx, frame, Load)
	require.NoError(t, err)
	e.waitRefusal(t, ctx, "navigate "+e.secret.URL+"/frame")
	_, err = tab.Goto(ctx, start, Load)
	require.NoError(t, err)
	_, err = tab.Evaluate(ctx, `(u) => { location.href = u; }`, e.secret.URL+"/location?k=v")
	require.NoError(t, err)
	e.waitRefusal(t, ctx, "navigate "+e.secret.URL+"/location?… (3 bytes of query)")
	_, err = tab.Goto(ctx, site.URL+"/local-redirect", Load)
	require.ErrorIs(t, err, errcode.NavigationBlocked, "a redirect to another local service")
	e.waitRefusal(t, ctx, "navigate "+e.secret.URL+"/redirect")

	refusals := e.refusals()
	assert.Contains(t, refusals, "goto "+e.secret.URL+"/goto?… (12 bytes of query)")
	for _, r := range refusals {
		assert.NotContains(t, r, "s3cr3t", "no query text in the log")
		assert.NotContains(t, r, "k=v", "no query text in the log")
	}
	assert.Empty(t, e.reached(), "the other service received nothing")

	// A tab whose sites name the service loads it; a wildcard does not count.
	named := e.tab(t, ctx, TabOptions{Sites: []string{"127.0.0.1:" + secretPort, "*.localhost", "localhost"}})
	_, err = named.Goto(ctx, e.secret.URL+"/named", Load)
	require.NoError(t, err)
	text, err := named.Text(ctx, Locator{Selector: "#s"})
	require.NoError(t, err)
	assert.Equal(t, "the secret", text)
	_, err = named.Goto(ctx, "http://app.localhost:"+secretPort+"/wild", Load)
	require.ErrorIs(t, err, errcode.NavigationBlocked, "*.localhost is no grant of app.localhost")
	_, err = named.Goto(ctx, siteOther+"/local-start", Load)
	require.NoError(t, err, "sites=localhost covers every port of localhost")
	assert.Equal(t, []string{"/named"}, e.reached())

	// The host's own tabs are not confined.
	own, err := e.p.Browser().NewTab(ctx, e.secret.URL+"/host")
	require.NoError(t, err)
	defer own.Close(ctx)
	assert.Equal(t, []string{"/named", "/host"}, e.reached())

	// A guarded session on a tab that is already on a local page (a popup,
	// the user's own tab) reads nothing there.
	onSecret := attachGuarded(t, ctx, e, own.ID())
	title, err := onSecret.Title(ctx)
	require.NoError(t, err)
	assert.Empty(t, title, "nor its title, which is the service's")
	_, err = onSecret.Text(ctx, Locator{Selector: "#s"})
	var se *SiteError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "add sites=127.0.0.1:"+secretPort+" to reach a service on this computer", se.Grant)
	assert.Equal(t, errcode.SiteNotAllowed, errcode.Of(err))
}

func attachGuarded(t *testing.T, ctx context.Context, e *localEnv, id string) *Tab {
	t.Helper()
	tab, err := e.p.Browser().AttachWith(ctx, id, TabOptions{Gateway: e.g})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Detach(ctx)
	})
	return tab
}

// TestGuardedTabRefusesLocalLinksAndForms follows a link and posts a form
// to another local service by clicking, as a user or a script would.
func TestGuardedTabRefusesLocalLinksAndForms(t *testing.T) {
	ctx := tctx(t, 60*time.Second)
	e := newLocalEnv(t, ctx)
	_, secretPort, _ := strings.Cut(strings.TrimPrefix(e.secret.URL, "http://"), ":")
	tab := e.tab(t, ctx, TabOptions{})
	links := serve("/local-links-"+secretPort, `<title>links</title>
<a id=link href="`+e.secret.URL+`/link?q=1">link</a>
<form method=post action="http://localhost:`+secretPort+`/form?a=bc"><input name=x value=y><button id=post>post</button></form>`)
	want := []string{
		"navigate " + e.secret.URL + "/link?… (3 bytes of query)",
		"navigate http://localhost:" + secretPort + "/form?… (4 bytes of query)",
	}
	for i, sel := range []string{"#link", "#post"} {
		_, err := tab.Goto(ctx, links, Load)
		require.NoError(t, err)
		// The click was sent; it reports the refusal when its check meets
		// the error page the refusal left.
		if err := tab.ClickElement(ctx, Locator{Selector: sel}, FormOptions{}); err != nil {
			require.ErrorIs(t, err, errcode.NavigationBlocked, sel)
		}
		e.waitRefusal(t, ctx, want[i])
	}
	var navs []string
	for _, r := range e.refusals() {
		if strings.HasPrefix(r, "navigate ") {
			navs = append(navs, r)
		}
	}
	assert.Equal(t, want, navs)
	assert.Empty(t, e.reached())
}

// FuzzNavigationTarget feeds arbitrary addresses to the action log's
// description: it never holds a query's text, and stays short.
func FuzzNavigationTarget(f *testing.F) {
	f.Add("https://example.com/login?token=s3cr3t#frag")
	f.Add("http://127.0.0.1:8080/a?b?c")
	f.Add("http://h/%3F?x")
	f.Fuzz(func(t *testing.T, raw string) {
		out := navigationTarget(raw)
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		if limit := len(u.Scheme) + len("://") + len(u.Host) + maxLoggedPath + 64; len(out) > limit {
			t.Fatalf("%q: %d bytes, more than %d", raw, len(out), limit)
		}
		before, after, hasQuery := strings.Cut(out, "?")
		if strings.Contains(before, "?") || hasQuery && !strings.HasPrefix(after, "… (") {
			t.Fatalf("%q: the log shows %q", raw, out)
		}
		if hasQuery && !strings.HasSuffix(after, fmt.Sprintf("(%d bytes of query)", len(u.RawQuery))) {
			t.Fatalf("%q: the log shows %q", raw, out)
		}
	})
}

// TestNavigationsAreLoggedWithoutQueries: a navigation the page makes is
// logged once, by path and query length; a goto's own is the goto's entry.
func TestNavigationsAreLoggedWithoutQueries(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	var mu sync.Mutex
	var logged []string
	changed := make(chan struct{})
	tab := newTabWith(t, "", TabOptions{Log: func(a Action) {
		mu.Lock()
		logged = append(logged, a.Method+" "+a.Target+" "+a.Outcome)
		close(changed)
		changed = make(chan struct{})
		mu.Unlock()
	}})
	from := serve("/nav-from", `<title>from</title><a id=go href="/nav-to?secret=abcdef">go</a>`)
	serve("/nav-to", `<title>to</title>`)
	_, err := tab.Goto(ctx, from+"?q=1", Load)
	require.NoError(t, err)
	require.NoError(t, tab.ClickElement(ctx, Locator{Selector: "#go"}, FormOptions{}))
	want := "navigated " + site.URL + "/nav-to?… (13 bytes of query) ok"
	for {
		mu.Lock()
		got, ch := slices.Clone(logged), changed
		mu.Unlock()
		if slices.Contains(got, want) {
			// The click's entry is written when it returns, which may be
			// after its navigation committed.
			assert.ElementsMatch(t, []string{
				"goto " + from + "?… (3 bytes of query) ok",
				`click selector "#go" ok`,
				want,
			}, got)
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no %q in %v", want, got)
		}
	}
}
