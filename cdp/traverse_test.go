package cdp

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

var reloads atomic.Int32

func init() {
	pages.HTML("/trav/a", `<!doctype html><title>a</title><p>a</p>`)
	pages.HTML("/trav/b", `<!doctype html><title>b</title><p>b</p>`)
	pages.HandleFunc("/trav/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<!doctype html><title>missing</title>`)
	})
	// The first load shows the page; every reload sends itself on.
	pages.HandleFunc("/trav/moves", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if reloads.Add(1) == 1 {
			fmt.Fprint(w, `<!doctype html><title>moves</title>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><script>location.replace("/trav/b")</script>`)
	})
	pages.HTML("/trav/later", `<!doctype html><title>later</title><script>
		setTimeout(() => { location.href = "/trav/b?from=later" }, 300)</script>`)
}

// TestHistoryMoves: reload, back and forward end at the document they
// show, with its response, like goto; with no entry in that direction
// they answer nil; a move within one document answers status 0.
func TestHistoryMoves(t *testing.T) {
	ctx := tctx(t, 60*time.Second)
	a, b, missing := site.URL+"/trav/a", site.URL+"/trav/b", site.URL+"/trav/missing"
	tab := newTab(t, "")

	r, err := tab.GoBack(ctx, "")
	require.NoError(t, err)
	assert.Nil(t, r, "the first entry has none before it")

	for _, u := range []string{a, missing, b} {
		_, err = tab.Goto(ctx, u, Load)
		require.NoError(t, err)
	}
	r, err = tab.GoBack(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, Response{Status: 404, URL: missing}, *r)
	r, err = tab.GoBack(ctx, DOMContentLoaded)
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, a, r.URL)
	assert.Equal(t, 200, r.Status)
	title, err := tab.Title(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a", title)

	r, err = tab.GoForward(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, missing, r.URL)
	r, err = tab.GoForward(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, Response{Status: 200, URL: b}, *r)
	r, err = tab.GoForward(ctx, "")
	require.NoError(t, err)
	assert.Nil(t, r, "the last entry has none after it")

	r, err = tab.Reload(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, Response{Status: 200, URL: b}, *r)

	// Entries of one document: a move between them is no new document.
	_, err = tab.Evaluate(ctx, `() => history.pushState({}, "", "/trav/b#two")`)
	require.NoError(t, err)
	r, err = tab.GoBack(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, Response{Status: 0, URL: b}, *r)
	r, err = tab.GoForward(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, b+"#two", r.URL)

	_, err = tab.GoBack(ctx, "sometime")
	require.Error(t, err)
}

// TestReloadFollowsThePage: a reload whose document sends itself on ends
// where the page settles, as a goto does.
func TestReloadFollowsThePage(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	reloads.Store(0)
	tab := newTab(t, site.URL+"/trav/moves")
	r, err := tab.Reload(ctx, "")
	require.NoError(t, err)
	require.NotNil(t, r)
	assert.Equal(t, Response{Status: 200, URL: site.URL + "/trav/b"}, *r)
}

// TestHistoryMoveOutsideSites: an entry outside the tab's sites is not
// gone back to, even one the browser kept and could show without asking
// the network.
func TestHistoryMoveOutsideSites(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	plain := newTab(t, siteOther+"/trav/a")
	_, err := plain.Goto(ctx, site.URL+"/trav/b", Load)
	require.NoError(t, err)
	tab := attachWith(t, plain, TabOptions{Sites: []string{"127.0.0.1"}})
	_, err = tab.GoBack(ctx, "")
	require.ErrorIs(t, err, errcode.SiteNotAllowed)
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	assert.Equal(t, site.URL+"/trav/b", u, "the tab stayed")
	r, err := tab.Reload(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, 200, r.Status)
}

// TestWaitForURL waits for an address by glob or pattern, then for the
// document's load; one that never comes times out saying the address
// last seen.
func TestWaitForURL(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	tab := newTab(t, site.URL+"/trav/a")
	glob := func(s string) *Pattern {
		p, err := GlobPattern(s)
		require.NoError(t, err)
		return p
	}
	require.NoError(t, tab.WaitForURL(ctx, glob(site.URL+"/trav/a"), Load), "already there")
	require.NoError(t, tab.WaitForURL(ctx, glob("**/trav/*"), Load))

	_, err := tab.Goto(ctx, site.URL+"/trav/later", Load)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, tab.WaitForURL(ctx, glob("**/b?from=*"), Load))
	assert.Less(t, time.Since(start), 10*time.Second)
	title, err := tab.Title(ctx)
	require.NoError(t, err)
	assert.Equal(t, "b", title, "the document at the address had loaded")

	re, err := CompilePattern(`/TRAV/B\?from=later$`, "i")
	require.NoError(t, err)
	require.NoError(t, tab.WaitForURL(ctx, re, DOMContentLoaded))

	short := tctx(t, 400*time.Millisecond)
	err = tab.WaitForURL(short, glob("*/trav/b*"), Load) // * stops at a slash
	var we *WaitTimeoutError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, site.URL+"/trav/b?from=later", we.Seen)
	assert.ErrorIs(t, err, ErrTimeout)

	_, err = GlobPattern(string(make([]byte, MaxPatternBytes+1)))
	require.ErrorIs(t, err, errcode.LimitExceeded)
}
