package cdp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"

	"github.com/tranquil/automation/errcode"
)

// newTabWith opens a tab on the shared browser with opts, closed when the
// test ends.
func newTabWith(t *testing.T, url string, opts TabOptions) *Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tab, err := sharedConn.NewTabWith(ctx, url, opts)
	if err != nil {
		t.Fatalf("new tab: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(ctx)
	})
	return tab
}

// attachWith opens a second session on tab's page with other options.
func attachWith(t *testing.T, tab *Tab, opts TabOptions) *Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	other, err := sharedConn.AttachWith(ctx, tab.ID(), opts)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = other.Detach(ctx)
	})
	return other
}

func TestDenyEntryMustBeAnEndpoint(t *testing.T) {
	ports, err := denyPorts(PagePolicy{Deny: []string{"127.0.0.1:9222", "localhost:80", "[::1]:443", "8080"}})
	require.NoError(t, err)
	assert.Equal(t, map[int]bool{9222: true, 80: true, 443: true, 8080: true}, ports)
	for _, bad := range []string{"", "127.0.0.1:x", "0", "70000"} {
		_, err := denyPorts(PagePolicy{Deny: []string{bad}})
		require.ErrorIs(t, err, ErrEndpoint, bad)
	}
}

// The navigation rule is sitepolicy's; CheckNavigation wraps its reason
// in the error scripts see.
func TestCheckNavigation(t *testing.T) {
	require.NoError(t, CheckNavigation("https://example.com/a?b#c"))
	err := CheckNavigation("javascript:alert(1)")
	require.ErrorIs(t, err, errcode.NavigationBlocked)
	var nb *NavigationBlockedError
	require.ErrorAs(t, err, &nb)
	require.Equal(t, NavigationBlockedError{URL: "javascript:alert(1)", Reason: "javascript: is not an http or https address"}, *nb)
}

func TestGatewayRefusal(t *testing.T) {
	g := &Gateway{ports: map[int]bool{9222: true, 80: true}}
	for u, want := range map[string]bool{
		"http://127.0.0.1:9222/json/version": true,
		"http://localhost:9222/":             true,
		"http://foo.localhost:9222/":         true,
		"http://alias-in-hosts-file:9222/":   true,
		"ws://127.0.0.1:9222/devtools/x":     true,
		"http://[::1]:9222/":                 true,
		"http://[::ffff:7f00:1]:9222/":       true,
		"http://0.0.0.0:9222/":               true,
		"http://[::]:9222/":                  true,
		"http://127.0.0.2:9222/":             true,
		"http://127.0.0.1/":                  true, // port 80 denied here
		"http://localhost/":                  true,
		"http://example.com/":                false, // a name on the web's own port is the web
		"https://127.0.0.1/":                 false,
		"http://192.168.1.5:9222/":           false,
		"http://127.0.0.1:9223/":             false,
		"https://example.com/":               false,
		"file:///etc/passwd":                 true,
		"chrome-extension://abc/x.html":      true,
		"data:text/plain,x":                  true,
		"ftp://example.com/":                 true,
		"%zz":                                true,
	} {
		if got := g.refusal(u) != ""; got != want {
			t.Errorf("%s: refused %v, want %v (%q)", u, got, want, g.refusal(u))
		}
	}
}

func TestGuardBlocksEveryRequestKind(t *testing.T) {
	ctx := tctx(t, 60*time.Second)
	chromium := testenv.Chromium(t)
	p, err := startChromium(ctx, chromium, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var got []string
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
	}))
	defer secret.Close()
	g, err := Guard(ctx, p.Browser(), PagePolicy{Deny: []string{strings.TrimPrefix(secret.URL, "http://")},
		AllowLocal: []string{strings.TrimPrefix(site.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logged []Action
	tab, err := p.Browser().NewTabWith(ctx, "", TabOptions{Gateway: g, Log: func(a Action) {
		logMu.Lock()
		logged = append(logged, a)
		logMu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	page := serve("/guard-kinds-"+strings.TrimPrefix(secret.URL, "http://127.0.0.1:"), `<title>kinds</title>
<link rel=stylesheet href="`+secret.URL+`/css"><img src="`+secret.URL+`/img">
<iframe src="`+secret.URL+`/frame"></iframe>
<script>fetch("`+secret.URL+`/fetch").catch(() => {}); new Worker(URL.createObjectURL(new Blob(["fetch('`+secret.URL+`/worker').catch(()=>{})"])));
window.open("`+secret.URL+`/popup");</script>`)
	if _, err := tab.Goto(ctx, page, Load); err != nil {
		t.Fatal(err)
	}
	_, err = tab.Goto(ctx, secret.URL+"/goto", Load)
	if !errors.Is(err, errcode.NavigationBlocked) {
		t.Fatalf("goto the denied endpoint: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	if len(got) > 0 {
		t.Errorf("the denied endpoint was reached: %v", got)
	}
	mu.Unlock()
	logMu.Lock()
	refusals := 0
	for _, a := range logged {
		if a.Outcome == "navigation_blocked" {
			refusals++
		}
	}
	logMu.Unlock()
	if refusals < 3 {
		t.Errorf("the refusals in the tab's frames are logged: %+v", logged)
	}
	// A second Guard of the same connection adds its denials to the one
	// gateway; the gateway runs until the last Guard is closed.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, "other"+r.URL.Path)
		mu.Unlock()
	}))
	defer other.Close()
	g2, err := Guard(ctx, p.Browser(), PagePolicy{Deny: []string{strings.TrimPrefix(other.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	if g2 != g {
		t.Fatal("a connection has one gateway")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{secret.URL + "/after-first-close", other.URL + "/after-first-close"} {
		if _, err := tab.Goto(ctx, u, Load); !errors.Is(err, errcode.NavigationBlocked) {
			t.Errorf("%s with one Guard left: %v", u, err)
		}
	}
	mu.Lock()
	if len(got) > 0 {
		t.Errorf("a denied endpoint was reached: %v", got)
	}
	mu.Unlock()
	if err := tab.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal("close more often than guard:", err)
	}
	// Nothing of the gateway's is left running.
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "cdp.(*Gateway)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway goroutines left after Close:\n%s", stacks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPressKeyRefusesFocusInAFrame(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	frame := serve("/press-frame-inner", `<input id=inner>`)
	page := serve("/press-frame", `<input id=outer><iframe id=f src="`+strings.Replace(frame, "127.0.0.1", "localhost", 1)+`"></iframe>`)
	tab := newTabWith(t, page, TabOptions{Sites: []string{"127.0.0.1"}})
	if _, err := tab.Evaluate(ctx, `() => document.getElementById("outer").focus()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.PressKey(ctx, "a", 0, FormOptions{}); err != nil {
		t.Fatalf("focus in the page itself: %v", err)
	}
	if _, err := tab.Evaluate(ctx, `() => document.getElementById("f").focus()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.PressKey(ctx, "a", 0, FormOptions{}); !errors.Is(err, errcode.SiteNotAllowed) {
		t.Fatalf("focus in another site's frame: %v", err)
	}
}

func TestPressKeyDryRunPressesNothingAndLogsNoKey(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	var mu sync.Mutex
	var logged []Action
	tab := newTabWith(t, serve("/press-dry", `<input id=f autofocus>`), TabOptions{Log: func(a Action) {
		mu.Lock()
		logged = append(logged, a)
		mu.Unlock()
	}})
	if _, err := tab.Evaluate(ctx, `() => document.getElementById("f").focus()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.PressKey(ctx, "q", 0, FormOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	v, err := tab.Evaluate(ctx, `() => document.getElementById("f").value`)
	if err != nil {
		t.Fatal(err)
	}
	if string(v) != `""` {
		t.Fatalf("a dry-run press typed %s", v)
	}
	if err := tab.PressKey(ctx, "q", 0, FormOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var presses []string
	for _, a := range logged {
		if a.Method == "press" {
			presses = append(presses, a.Outcome)
			if strings.Contains(a.Target, "q") {
				t.Errorf("the key is in the log: %+v", a)
			}
		}
	}
	if strings.Join(presses, ",") != "dry-run,ok" {
		t.Fatalf("press outcomes %v", presses)
	}
}

// TestRefusedDocumentIsTakenAway commits a data: document the way a
// history entry would, past Goto's check: the tab takes it off the frame
// and logs the refusal.
func TestRefusedDocumentIsTakenAway(t *testing.T) {
	ctx := tctx(t, 20*time.Second)
	var mu sync.Mutex
	var logged []Action
	tab := newTabWith(t, serve("/refused-doc", `<title>start</title>`), TabOptions{Log: func(a Action) {
		mu.Lock()
		logged = append(logged, a)
		mu.Unlock()
	}})
	if _, err := tab.c.Page.Navigate(ctx, page.NewNavigateArgs("data:text/html,<title>data</title>")); err != nil {
		t.Fatal(err)
	}
	err := tab.waitState(ctx, func() bool { return tab.nav.url == "about:blank" }, "the refused document to go")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, a := range logged {
		found = found || a.Method == "navigate" && a.Outcome == "navigation_blocked" && a.Target == "data:"
	}
	if !found {
		t.Errorf("the refusal is logged: %+v", logged)
	}
}

// TestDevToolsSocketRefusesOtherOrigins backs a line of the security
// model: page code on another origin cannot open a browser's DevTools
// WebSocket even knowing its address; only a document on the endpoint's
// own origin could, and that is what the gateway refuses.
func TestDevToolsSocketRefusesOtherOrigins(t *testing.T) {
	ctx := tctx(t, 60*time.Second)
	p := launchWithPort(t)
	b, err := Connect(ctx, p.Endpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tab, err := b.NewTab(ctx, serve("/devtools-ws", `<title>ws</title>`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := tab.Evaluate(ctx, `(url) => new Promise((resolve) => {
  const ws = new WebSocket(url);
  ws.onopen = () => { ws.close(); resolve("open"); };
  ws.onerror = () => resolve("refused");
})`, p.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `"refused"` {
		t.Fatalf("a page on another origin opened the DevTools socket: %s", got)
	}
}
