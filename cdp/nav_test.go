package cdp

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

func init() {
	pages.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(700 * time.Millisecond)
		w.Header().Set("Content-Type", "image/png")
	})
}

func TestGotoWaitsForTheNewDocument(t *testing.T) {
	slow := serve("/slow-page", `<title>slow</title><img src="/slow.png"><p id=p>body</p>`)
	tab := newTab(t, "")
	ctx := tctx(t, 20*time.Second)

	_, err := tab.Goto(ctx, slow, DOMContentLoaded)
	require.NoError(t, err)
	v, err := tab.Evaluate(ctx, `() => [document.getElementById("p") !== null, document.readyState]`)
	require.NoError(t, err)
	require.JSONEq(t, `[true, "interactive"]`, string(v), "DOMContentLoaded must not wait for the slow image")

	_, err = tab.Goto(ctx, slow+"?again", Load)
	require.NoError(t, err)
	v, err = tab.Evaluate(ctx, `() => document.readyState`)
	require.NoError(t, err)
	require.JSONEq(t, `"complete"`, string(v))

	// Same document: no new loader, returns at once.
	_, err = tab.Goto(ctx, slow+"?again#frag", Load)
	require.NoError(t, err)
	v, err = tab.Evaluate(ctx, `() => location.hash`)
	require.NoError(t, err)
	require.JSONEq(t, `"#frag"`, string(v))

	_, err = tab.Goto(ctx, "http://127.0.0.1:1/", Load)
	require.ErrorIs(t, err, errcode.Navigation)
	require.ErrorContains(t, err, "ERR_")
	_, err = tab.Goto(ctx, slow, "networkidle")
	require.ErrorContains(t, err, "unknown wait state")

	// Identity survives navigation.
	id := tab.ID()
	_, err = tab.Goto(ctx, siteOther+"/slow-page", DOMContentLoaded)
	require.NoError(t, err)
	require.Equal(t, id, tab.ID())
	infos, err := sharedConn.Targets(ctx)
	require.NoError(t, err)
	found := false
	for _, ti := range infos {
		found = found || ti.ID == id
	}
	require.True(t, found)
}

func TestWaitForNavigationAfterClick(t *testing.T) {
	serve("/clicked", `<title>clicked</title>`)
	start := serve("/click-start", `<a id=a href="/clicked" style="position:absolute;left:0;top:0;width:100px;height:40px;display:block">go</a>
<button id=b style="position:absolute;left:0;top:60px;width:100px;height:40px" onclick="history.pushState({}, '', '#pushed')">push</button>`)
	tab := newTab(t, start)
	ctx := tctx(t, 10*time.Second)
	err := tab.WaitForNavigation(ctx, Load, func(ctx context.Context) error { return tab.Click(ctx, 50, 20) })
	require.NoError(t, err)
	title, err := tab.Title(ctx)
	require.NoError(t, err)
	require.Equal(t, "clicked", title)

	_, err = tab.Goto(ctx, start, Load)
	require.NoError(t, err)
	err = tab.WaitForNavigation(ctx, DOMContentLoaded, func(ctx context.Context) error { return tab.Click(ctx, 50, 80) })
	require.NoError(t, err)
	u, err := tab.URL(ctx)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(u, "#pushed"), u)

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	var te *WaitTimeoutError
	require.ErrorAs(t, tab.WaitForNavigation(short, Load, nil), &te)
}

func TestTrustedInputAndConsole(t *testing.T) {
	tab := newTab(t, serve("/input", `<form onsubmit="event.preventDefault(); console.log('submitted', document.getElementById('f').value)">
<input id=f style="position:absolute;left:0;top:0;width:200px;height:30px"></form>
<script>
window.events = [];
const f = document.getElementById("f");
for (const type of ["input", "keydown", "click", "focus"]) f.addEventListener(type, e => events.push(type + ":" + e.isTrusted));
</script>`))
	ctx := tctx(t, 10*time.Second)
	var logs []ConsoleMessage
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	stop := tab.OnConsole(func(m ConsoleMessage) { <-mu; logs = append(logs, m); mu <- struct{}{} })
	defer stop()
	var pageErrs []*EvalError
	stopErr := tab.OnPageError(func(e *EvalError) { <-mu; pageErrs = append(pageErrs, e); mu <- struct{}{} })
	defer stopErr()

	require.NoError(t, tab.Click(ctx, 50, 15))
	require.NoError(t, tab.InsertText(ctx, "héllo"))
	require.NoError(t, tab.Press(ctx, "!", 0))
	require.NoError(t, tab.Press(ctx, "Backspace", 0))
	require.NoError(t, tab.Press(ctx, "a", Ctrl)) // select all: types nothing
	require.NoError(t, tab.Press(ctx, "Enter", 0))
	require.ErrorIs(t, tab.Press(ctx, "NoSuchKey", 0), errUnknownKey)
	v, err := tab.Evaluate(ctx, `() => [document.getElementById("f").value, events.every(e => e.endsWith(":true")), events.includes("click:true")]`)
	require.NoError(t, err)
	require.JSONEq(t, `["héllo", true, true]`, string(v))

	_, err = tab.Evaluate(ctx, `() => { setTimeout(() => { throw new TypeError("late") }, 0); console.warn("w", 1, {a: 1}) }`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		<-mu
		defer func() { mu <- struct{}{} }()
		return len(logs) >= 2 && len(pageErrs) >= 1
	}, 5*time.Second, 20*time.Millisecond)
	<-mu
	require.Equal(t, ConsoleMessage{Type: "log", Text: "submitted héllo"}, logs[0])
	require.Equal(t, "warning", logs[1].Type)
	require.True(t, strings.HasPrefix(logs[1].Text, "w 1 "), logs[1].Text)
	require.Equal(t, "TypeError", pageErrs[0].Name, "%#v", pageErrs[0])
	require.Equal(t, "late", pageErrs[0].Message)
	mu <- struct{}{}
}

func TestConnectEndpoints(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	withPort := launchWithPort(t) // Launch opens no port to connect to
	port := strconv.Itoa(withPort.Port())
	for _, ep := range []string{
		withPort.Endpoint(),
		"http://127.0.0.1:" + port,
		filepath.Join(withPort.DataDir(), "DevToolsActivePort"),
		withPort.DataDir(),
	} {
		b, err := Connect(ctx, ep, nil)
		require.NoError(t, err, ep)
		require.Equal(t, withPort.Endpoint(), b.WebSocketURL(), ep)
		infos, err := b.Targets(ctx)
		require.NoError(t, err, ep)
		require.NotEmpty(t, infos)
		for _, ti := range infos {
			require.Contains(t, []string{"page", "webview"}, ti.Type)
		}
		require.NoError(t, b.Close())
		<-b.Done()
	}
	bad := filepath.Join(t.TempDir(), "DevToolsActivePort")
	require.NoError(t, os.WriteFile(bad, []byte("notaport\n/devtools/browser/x\n"), 0o600))
	for _, ep := range []string{"", "ws://127.0.0.1:" + port + "/devtools/page/x", bad, filepath.Join(t.TempDir(), "missing"), "http://127.0.0.1:1"} {
		_, err := Connect(ctx, ep, nil)
		require.ErrorIs(t, err, ErrEndpoint, ep)
	}
}

func TestAttachDetach(t *testing.T) {
	ctx := tctx(t, 20*time.Second)
	tab := newTab(t, serve("/attach", `<title>attach</title>`))
	// A second session on the same page, over the same socket.
	other, err := sharedConn.Attach(ctx, tab.ID())
	require.NoError(t, err)
	v, err := other.Evaluate(ctx, `() => document.title`)
	require.NoError(t, err)
	require.JSONEq(t, `"attach"`, string(v))
	require.NoError(t, other.Detach(ctx))
	require.NoError(t, other.Detach(ctx)) // idempotent
	_, err = other.Evaluate(ctx, `() => 1`)
	require.ErrorIs(t, err, ErrDetached)
	require.NotErrorIs(t, err, ErrTargetClosed)
	// The first session is untouched.
	v, err = tab.Evaluate(ctx, `() => 2`)
	require.NoError(t, err)
	require.JSONEq(t, `2`, string(v))

	_, err = sharedConn.Attach(ctx, "NO-SUCH-TARGET")
	require.Error(t, err)
}
