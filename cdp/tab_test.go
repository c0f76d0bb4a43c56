package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/internal/testenv"
)

func TestEvaluateArgsByValue(t *testing.T) {
	tab := newTab(t, serve("/eval", `<title>Eval</title><p id=x>hello</p>`))
	ctx := tctx(t, 10*time.Second)
	tricky := `"); alert(1); ("` // would break out of spliced code
	v, err := tab.Evaluate(ctx, `(s, n) => s + ":" + n`, tricky, 2)
	require.NoError(t, err)
	var s string
	require.NoError(t, json.Unmarshal(v, &s))
	require.Equal(t, tricky+":2", s)

	v, err = tab.Evaluate(ctx, `async () => { await new Promise(r => setTimeout(r, 20)); return document.getElementById("x").textContent }`)
	require.NoError(t, err)
	require.JSONEq(t, `"hello"`, string(v))

	v, err = tab.Evaluate(ctx, `() => undefined`)
	require.NoError(t, err)
	require.Nil(t, v)
}

func TestEvalErrors(t *testing.T) {
	tab := newTab(t, serve("/eval-errors", `<p>x</p>`))
	ctx := tctx(t, 10*time.Second)
	cases := []struct {
		fn, name, msg string
	}{
		{`() => { throw new TypeError("boom") }`, "TypeError", "boom"},
		{`async () => { throw new Error("async boom") }`, "Error", "async boom"},
		{`() => Promise.reject(42)`, "", "42"},
		{`() => { throw "plain" }`, "", `"plain"`},
		{`() => { const e = new Error("custom"); e.name = "MyError"; throw e }`, "MyError", "custom"},
		{`() => { let x = ; }`, "SyntaxError", ""},
	}
	for _, c := range cases {
		_, err := tab.Evaluate(ctx, c.fn)
		var ee *EvalError
		require.ErrorAs(t, err, &ee, c.fn)
		require.Equal(t, c.name, ee.Name, c.fn)
		if c.msg != "" {
			require.Equal(t, c.msg, ee.Message, c.fn)
		}
		require.Positive(t, ee.Line)
		if c.name == "TypeError" {
			require.Contains(t, ee.Stack, "TypeError: boom")
		}
	}
	// Special numbers come back by their JavaScript spelling.
	v, err := tab.Evaluate(ctx, `(x) => x`, math.NaN())
	require.NoError(t, err)
	require.JSONEq(t, `"NaN"`, string(v))
	v, err = tab.Evaluate(ctx, `() => 10n ** 20n`)
	require.NoError(t, err)
	require.JSONEq(t, `"100000000000000000000n"`, string(v))
	_, err = tab.Evaluate(ctx, `(x) => x`, json.RawMessage(`{bad`))
	require.Error(t, err)
}

func TestEvaluateRetriedAcrossNavigation(t *testing.T) {
	dest := serve("/nav-dest", `<title>dest</title><p>dest</p>`)
	src := serve("/nav-src", `<p>src</p><script>setTimeout(() => { location.href = "/nav-dest" }, 100)</script>`)
	tab := newTab(t, src)
	ctx := tctx(t, 10*time.Second)
	// The first run sleeps past the navigation, which kills it; the retry
	// runs in the new document and finishes there.
	v, err := tab.Evaluate(ctx, `async () => { await new Promise(r => setTimeout(r, 600)); return location.pathname }`)
	require.NoError(t, err)
	require.JSONEq(t, `"/nav-dest"`, string(v))
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	require.Equal(t, dest, u)
}

func TestWaitForAcrossNavigation(t *testing.T) {
	serve("/wait-dest", `<p>dest</p><script>setTimeout(() => { const d = document.createElement("div"); d.id = "done"; document.body.append(d); window.ready = 1 }, 200)</script>`)
	src := serve("/wait-src", `<p>src</p><script>setTimeout(() => { location.href = "/wait-dest" }, 100)</script>`)

	tab := newTab(t, src)
	require.NoError(t, tab.WaitFor(tctx(t, 10*time.Second), Selector("#done")))

	tab2 := newTab(t, src)
	require.NoError(t, tab2.WaitFor(tctx(t, 10*time.Second), Predicate(`(want) => window.ready === want && location.pathname`, 1)))
}

func TestWaitForErrors(t *testing.T) {
	tab := newTab(t, serve("/wait-errors", `<p>x</p>`))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := tab.WaitFor(ctx, Selector("#never"))
	var te *WaitTimeoutError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), `selector "#never"`)

	var ee *EvalError
	err = tab.WaitFor(tctx(t, 5*time.Second), Selector("##bad"))
	require.ErrorAs(t, err, &ee)
	require.Equal(t, "SyntaxError", ee.Name)
	err = tab.WaitFor(tctx(t, 5*time.Second), Predicate(`() => { throw new RangeError("nope") }`))
	require.ErrorAs(t, err, &ee)
	require.Equal(t, "RangeError", ee.Name)
}

func TestCrossSiteNavigationUsesNewContext(t *testing.T) {
	serve("/site-a", `<title>A</title><script>window.mark = "a"</script>`)
	serve("/site-b", `<title>B</title><script>window.mark = "b"</script>`)
	tab := newTab(t, site.URL+"/site-a")
	ctx := tctx(t, 10*time.Second)
	v, err := tab.Evaluate(ctx, `() => window.mark`)
	require.NoError(t, err)
	require.JSONEq(t, `"a"`, string(v))
	tab.frames.mu.Lock()
	old := tab.frames.realms.mainCtx
	tab.frames.mu.Unlock()

	_, err = tab.Goto(ctx, siteOther+"/site-b", Load) // another site: another renderer
	require.NoError(t, err)
	v, err = tab.Evaluate(ctx, `() => [window.mark, location.host]`)
	require.NoError(t, err)
	require.JSONEq(t, `["b", "`+strings.TrimPrefix(siteOther, "http://")+`"]`, string(v))

	// The old realm's id must fail, not run in the new document.
	_, err = tab.c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(`() => location.href`).
		SetUniqueContextID(old).SetReturnByValue(true))
	require.Error(t, err)
	require.True(t, contextGone(err), "%v", err)
	title, err := tab.Title(ctx)
	require.NoError(t, err)
	require.Equal(t, "B", title)
}

func TestTargetClosedMidCall(t *testing.T) {
	tab := newTab(t, serve("/closed", `<p>x</p>`))
	ctx := tctx(t, 10*time.Second)
	errc := pendingEvaluate(ctx, t, tab)
	_, err := sharedConn.Client().Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(tab.ID())))
	require.NoError(t, err)
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ErrTargetClosed)
		require.ErrorIs(t, err, ErrDetached)
		var de *DetachedError
		require.ErrorAs(t, err, &de)
	case <-time.After(3 * time.Second):
		t.Fatal("pending evaluate did not fail after the target closed")
	}
	// Later calls fail at once with the same typed error.
	_, err = tab.Evaluate(ctx, `() => 1`)
	require.ErrorIs(t, err, ErrTargetClosed)
	_, err = tab.URL(ctx)
	require.ErrorIs(t, err, ErrTargetClosed)
	require.NoError(t, tab.Detach(ctx))
}

func TestBrowserKilledFailsPendingCalls(t *testing.T) {
	testenv.CheckGoroutines(t) // the connection's reader and sessions all stop
	ctx := tctx(t, 30*time.Second)
	p, err := startChromium(ctx, testenv.Chromium(t), true, nil)
	require.NoError(t, err)
	defer p.Close()
	b := p.Browser() // the pipe: its end is the browser's death
	var tabs []*Tab
	for range 2 {
		tab, err := b.NewTab(ctx, "")
		require.NoError(t, err)
		tabs = append(tabs, tab)
	}
	errc := make(chan error, 4)
	for _, tab := range tabs {
		go func() {
			_, err := tab.Evaluate(ctx, neverSettles)
			errc <- err
		}()
		go func() { errc <- tab.WaitFor(ctx, Selector("#never")) }()
	}
	for _, tab := range tabs {
		waitPending(ctx, t, tab, 1)
	}
	require.NoError(t, p.Kill())
	killed := time.Now()
	for range 4 {
		select {
		case err := <-errc:
			require.ErrorIs(t, err, ErrBrowserClosed)
		case <-time.After(time.Second - time.Since(killed)):
			t.Fatal("a pending call did not fail within 1s of the browser's death")
		}
	}
	<-b.Done()
	require.ErrorIs(t, b.Err(), ErrBrowserClosed)
	_, err = b.Targets(ctx)
	require.ErrorIs(t, err, ErrBrowserClosed)
	_, err = tabs[0].Evaluate(ctx, `() => 1`)
	require.ErrorIs(t, err, ErrBrowserClosed)
}

func TestScreenshotPNG(t *testing.T) {
	tab := newTab(t, serve("/shot", `<body style="margin:0;background:#f00"><div style="height:3000px;width:10px;background:#00f"></div></body>`))
	ctx := tctx(t, 20*time.Second)
	b, err := tab.Screenshot(ctx, ScreenshotOptions{})
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dx(), 100)

	b, err = tab.Screenshot(ctx, ScreenshotOptions{Clip: &Rect{X: 20, Y: 20, Width: 50, Height: 40}})
	require.NoError(t, err)
	img, err = png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	require.Equal(t, 50, img.Bounds().Dx())
	require.Equal(t, 40, img.Bounds().Dy())
	r, g, bl, _ := img.At(10, 10).RGBA()
	require.Equal(t, [3]uint32{0xffff, 0, 0}, [3]uint32{r, g, bl})

	b, err = tab.Screenshot(ctx, ScreenshotOptions{FullPage: true})
	require.NoError(t, err)
	img, err = png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	require.Equal(t, 3000, img.Bounds().Dy())
}

func TestLargeRequests(t *testing.T) {
	tab := newTab(t, serve("/large", `<p>x</p>`))
	ctx := tctx(t, 20*time.Second)
	big := strings.Repeat("é", 3<<20) // 6 MiB of UTF-8 as an argument
	v, err := tab.Evaluate(ctx, `(s) => s.length`, big)
	require.NoError(t, err)
	require.JSONEq(t, `3145728`, string(v))
	// A large function source (well over 4 KiB) in one request.
	src := "() => { const a = [" + strings.Repeat("1,", 100000) + "]; return a.length }"
	v, err = tab.Evaluate(ctx, src)
	require.NoError(t, err)
	require.JSONEq(t, `100000`, string(v))
	// A large reply.
	v, err = tab.Evaluate(ctx, `() => "x".repeat(8 << 20)`)
	require.NoError(t, err)
	require.Len(t, v, 8<<20+2)

	// A connection with a small limit refuses to send, typed, and lives on.
	p, err := startChromium(ctx, testenv.Chromium(t), true, &Options{MaxMessageSize: 64 << 10})
	require.NoError(t, err)
	defer p.Close()
	small, err := p.Browser().NewTab(ctx, "")
	require.NoError(t, err)
	_, err = small.Evaluate(ctx, `(s) => s.length`, strings.Repeat("x", 100<<10))
	require.ErrorIs(t, err, ErrMessageTooLarge)
	v, err = small.Evaluate(ctx, `() => 7`)
	require.NoError(t, err)
	require.JSONEq(t, `7`, string(v))
}

func TestTargetCrashedMidCall(t *testing.T) {
	tab := newTab(t, serve("/crash", `<p>x</p>`))
	ctx := tctx(t, 10*time.Second)
	errc := pendingEvaluate(ctx, t, tab)
	go tab.c.Page.Crash(ctx) // never answered: the renderer is gone
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ErrTargetCrashed)
	case <-time.After(3 * time.Second):
		t.Fatal("pending evaluate did not fail after the renderer crashed")
	}
}

// pendingEvaluate starts an Evaluate that never settles and returns where
// its error will arrive, once the page has seen the call start.
func pendingEvaluate(ctx context.Context, t *testing.T, tab *Tab) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := tab.Evaluate(ctx, neverSettles)
		errc <- err
	}()
	waitPending(ctx, t, tab, 1)
	return errc
}

// neverSettles counts itself in the page, then never settles.
const neverSettles = `() => { globalThis.__pending = (globalThis.__pending || 0) + 1; return new Promise(() => {}); }`

// waitPending waits until n neverSettles calls are running in tab's page.
func waitPending(ctx context.Context, t *testing.T, tab *Tab, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, err := tab.Evaluate(ctx, `() => globalThis.__pending || 0`)
		var got int
		return err == nil && json.Unmarshal(v, &got) == nil && got >= n
	}, 10*time.Second, 5*time.Millisecond, "the evaluate never reached the page")
}

// Title is the document's title as the page has it now: right after a
// page sets it, and right after a navigation, never the browser's older
// copy (its tab strip's, which follows the renderer a moment later).
func TestTitleIsLive(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	url := serve("/title-live", `<!doctype html><title>First</title><p>x`)
	tab := newTab(t, url)
	for i := range 20 {
		want := fmt.Sprintf("title %d", i)
		_, err := tab.Evaluate(ctx, `(t) => { document.title = t; }`, want)
		require.NoError(t, err)
		got, err := tab.Title(ctx)
		require.NoError(t, err)
		require.Equal(t, want, got, "the title the page set %d", i)
	}
	second := serve("/title-live-2", `<!doctype html><title>Second page</title><p>y`)
	for range 5 {
		_, err := tab.Goto(ctx, url, Load)
		require.NoError(t, err)
		_, err = tab.Goto(ctx, second, Load)
		require.NoError(t, err)
		got, err := tab.Title(ctx)
		require.NoError(t, err)
		require.Equal(t, "Second page", got)
	}
	untitled := serve("/title-live-none", `<!doctype html><p>no title`)
	_, err := tab.Goto(ctx, untitled, Load)
	require.NoError(t, err)
	got, err := tab.Title(ctx)
	require.NoError(t, err)
	assert.Equal(t, "", got, "a page without a title has none, not its address")
}
