package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

func init() {
	pages.HandleFunc("/resp/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<title>missing</title>no such page")
	})
	pages.HandleFunc("/resp/empty-500", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	pages.HandleFunc("/resp/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/resp/moved-twice", http.StatusFound)
	})
	pages.HandleFunc("/resp/res/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store") // every goto loads them again
		fmt.Fprint(w, "/* resource */")
	})
	pages.HandleFunc("/resp/moved-twice", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/resp/missing?from=redirect", http.StatusMovedPermanently)
	})
}

func TestGotoResponse(t *testing.T) {
	ok := serve("/resp/ok", `<title>ok</title><p>fine</p>`)
	tab := newTab(t, "")
	ctx := tctx(t, 20*time.Second)

	r, err := tab.Goto(ctx, ok, Load)
	require.NoError(t, err)
	require.Equal(t, Response{Status: 200, URL: ok}, *r)

	r, err = tab.Goto(ctx, site.URL+"/resp/missing", Load)
	require.NoError(t, err, "an error status is not a failed navigation")
	require.Equal(t, Response{Status: 404, URL: site.URL + "/resp/missing"}, *r)

	r, err = tab.Goto(ctx, site.URL+"/resp/moved", Load)
	require.NoError(t, err)
	require.Equal(t, Response{Status: 404, URL: site.URL + "/resp/missing?from=redirect"}, *r, "the status and address after the redirects")

	// An empty error body makes the browser show its own page; the server
	// answered all the same.
	r, err = tab.Goto(ctx, site.URL+"/resp/empty-500", Load)
	require.NoError(t, err)
	require.Equal(t, Response{Status: 500, URL: site.URL + "/resp/empty-500"}, *r)

	require.Equal(t, Response{Status: 200, URL: ok}, *mustGoto(t, tab, ok))
	r, err = tab.Goto(ctx, ok+"#part", Load)
	require.NoError(t, err)
	require.Equal(t, Response{URL: ok + "#part"}, *r, "a same-document navigation has no response")

	r, err = tab.Goto(ctx, "about:blank", Load)
	require.NoError(t, err)
	require.Equal(t, Response{URL: "about:blank"}, *r)

	r, err = tab.Goto(ctx, "http://127.0.0.1:1/", Load)
	require.ErrorIs(t, err, errcode.Navigation)
	require.Nil(t, r)
}

func mustGoto(t *testing.T, tab *Tab, url string) *Response {
	t.Helper()
	r, err := tab.Goto(tctx(t, 20*time.Second), url, Load)
	require.NoError(t, err)
	return r
}

// waitNetworkOff waits until tab has turned the Network domain off after
// its gotos (networkLinger), or has it on for good (a guarded tab): from
// then on, what the page does is past the domain's last change.
func waitNetworkOff(t *testing.T, ctx context.Context, tab *Tab) {
	t.Helper()
	n := &tab.net
	waitFor(t, ctx, "the Network domain off", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return !n.on || n.pinned
	})
}

// TestGotoNetworkOnlyDuringNavigation checks that the Network domain goes
// off again once gotos stop: the page's own requests are not reported
// afterwards.
func TestGotoNetworkOnlyDuringNavigation(t *testing.T) {
	serve("/resp/later.json", `{}`)
	page := serve("/resp/quiet", `<title>quiet</title><button id=b onclick="fetch('/resp/later.json')">x</button>`)
	tab := newTab(t, "")
	ctx := tctx(t, 20*time.Second)
	var mu sync.Mutex
	var seen []string
	stop := tab.subscribe(func(method string, params json.RawMessage) {
		if strings.HasPrefix(method, "Network.requestWillBeSent") {
			mu.Lock()
			seen = append(seen, string(params))
			mu.Unlock()
		}
	})
	defer stop()
	mustGoto(t, tab, page)
	waitNetworkOff(t, ctx, tab)
	mu.Lock()
	seen = nil
	mu.Unlock()
	_, err := tab.Evaluate(ctx, `() => fetch("/resp/later.json").then(r => r.status)`)
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, seen, "no network events once the goto is done")
}

// TestGotoFromAHungPage: the Network domain is turned on without waiting
// for the renderer, so a page stuck in a loop does not hold up a goto to
// another site, and its status is still read.
func TestGotoFromAHungPage(t *testing.T) {
	hung := serve("/resp/hung", `<title>hung</title><script>setTimeout(() => { for (;;) {} }, 100)</script>`)
	serve("/resp/elsewhere", `<title>elsewhere</title>`)
	tab := newTab(t, hung)
	time.Sleep(300 * time.Millisecond)
	ctx := tctx(t, 10*time.Second)
	start := time.Now()
	r, err := tab.Goto(ctx, siteOther+"/resp/elsewhere", Load)
	require.NoError(t, err)
	require.Equal(t, 200, r.Status)
	require.Less(t, time.Since(start), 5*time.Second)
}

// BenchmarkGotoResponse measures Tab.Goto, which reads the document's
// status from the Network domain it turns on around gotos, against the
// same navigation made the way Goto did before it returned a status
// (Page.navigate, then the lifecycle wait), interleaved goto by goto on one
// tab so that a drift in the machine's speed hits both alike. It reports
// both medians and the median of the paired differences. Target: p50
// ratio ≤ 1.05.
func BenchmarkGotoResponse(b *testing.B) {
	bench := serve("/resp/bench", `<title>bench</title><link rel=stylesheet href="/resp/res/a.css">
<script src="/resp/res/b.js"></script><img src="/resp/res/c.png"><img src="/resp/res/d.png">
<script>fetch("/resp/res/e.json")</script><h1>page</h1>`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tab, err := sharedConn.NewTabWith(ctx, "", TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close(ctx)
	plain := func(u string) error {
		return tab.act(ctx, "goto", addressOf(u), false, func(ctx context.Context) error {
			nav, err := tab.c.Page.Navigate(ctx, page.NewNavigateArgs(u))
			if err != nil {
				return err
			}
			loader := string(*nav.LoaderID)
			return tab.waitState(ctx, func() bool { return tab.nav.lifecycle[loader]["load"] }, "navigation")
		})
	}
	const n = 200
	var with, without, diff []float64
	for b.Loop() {
		with, without, diff = nil, nil, nil
		for i := 0; i < n+10; i++ {
			u := fmt.Sprintf("%s?%d", bench, i)
			order := []bool{i%2 == 0, i%2 != 0} // who goes first alternates
			var pair [2]float64
			for _, status := range order {
				t0 := time.Now()
				if status {
					if _, err := tab.Goto(ctx, u, Load); err != nil {
						b.Fatal(err)
					}
				} else if err := plain(u); err != nil {
					b.Fatal(err)
				}
				d := float64(time.Since(t0).Microseconds())
				if status {
					pair[0] = d
				} else {
					pair[1] = d
				}
			}
			if i >= 10 { // warm-up
				with, without = append(with, pair[0]), append(without, pair[1])
				diff = append(diff, pair[0]-pair[1])
			}
		}
	}
	pw, po := median(with), median(without)
	b.ReportMetric(pw, "status-p50-µs")
	b.ReportMetric(po, "nostatus-p50-µs")
	b.ReportMetric(pw/po, "p50-ratio")
	b.ReportMetric(median(diff), "paired-diff-p50-µs")
}
