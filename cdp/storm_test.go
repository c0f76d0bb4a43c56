package cdp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/target"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"

	"github.com/tranquil/automation/errcode"
)

// stormPage loops on dialogs once its button is clicked, forever: the
// page's code never returns to its event loop. It asks before it is left.
const stormPage = `<title>storm</title>
<button style="position:absolute;left:0;top:0;width:100px;height:40px" onclick="setTimeout(storm, 0)">storm</button>
<script>
addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = ""; });
function storm() { for (let i = 0; ; i++) { alert("a" + i); confirm("c" + i); prompt("p" + i, "x"); } }
</script>`

// stormLog is a tab's log that signals its first storm entry.
type stormLog struct {
	actionLog
	once  sync.Once
	storm chan Action
}

func newStormLog() *stormLog { return &stormLog{storm: make(chan Action, 1)} }

func (l *stormLog) add(a Action) {
	l.actionLog.add(a)
	if a.Method == "dialog" && strings.HasPrefix(a.Target, "dialog storm: ") {
		l.once.Do(func() { l.storm <- a })
	}
}

// startStorm opens the storm page on b with opts and policy h, starts the
// storm and returns once the log has its first storm entry.
func startStorm(t *testing.T, b *Browser, h DialogHandler) (*Tab, *stormLog) {
	t.Helper()
	log := newStormLog()
	ctx := tctx(t, 20*time.Second)
	tab, err := b.NewTabWith(ctx, serve("/storm", stormPage), TabOptions{Log: log.add})
	require.NoError(t, err)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(cctx)
	})
	tab.HandleDialogs(h)
	require.NoError(t, tab.Click(ctx, 50, 20))
	select {
	case a := <-log.storm:
		require.Equal(t, "dismissed", a.Outcome)
		require.Equal(t, "127.0.0.1", a.Site)
	case <-ctx.Done():
		t.Fatalf("no storm entry in the log; dialogs logged: %d", len(log.dialogs()))
	}
	return tab, log
}

// within runs f with a context of d and fails unless f returns before the
// context's deadline plus a little.
func within(t *testing.T, what string, d time.Duration, f func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	require.Less(t, time.Since(start), d+time.Second, "%s did not return within its timeout", what)
	return err
}

func testStorm(t *testing.T, acceptBeforeUnload bool) {
	var asked atomic.Int64
	tab, log := startStorm(t, sharedConn, func(d Dialog) DialogAnswer {
		asked.Add(1)
		return DialogAnswer{Accept: d.Type == "beforeunload" && acceptBeforeUnload}
	})
	// The storm keeps being answered: the log keeps counting dismissals
	// the handler never saw.
	require.Eventually(t, func() bool {
		n := 0
		for _, a := range log.dialogs() {
			var k int
			if _, err := fmt.Sscanf(a.Target, "dialog storm: %d dismissed", &k); err == nil {
				n += k
			}
		}
		return n > 10*DialogStormRate
	}, 15*time.Second, 20*time.Millisecond, "dialogs are still answered")
	require.LessOrEqual(t, asked.Load(), int64(2*DialogStormRate), "a storm's dialogs are not handed to the handler")

	// Every call returns within its own timeout.
	err := within(t, "goto", 3*time.Second, func(ctx context.Context) error {
		_, err := tab.Goto(ctx, serve("/storm-next", `<title>next</title>`), Load)
		return err
	})
	require.ErrorIs(t, err, errcode.Navigation)
	require.ErrorContains(t, err, "dialogs without pause")
	var title string
	require.NoError(t, within(t, "title", 3*time.Second, func(ctx context.Context) (err error) {
		title, err = tab.Title(ctx)
		return err
	}))
	require.Equal(t, "storm", title)
	err = within(t, "evaluate", 2*time.Second, func(ctx context.Context) error {
		_, err := tab.Evaluate(ctx, `() => 1`)
		return err
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The tab closes, and the browser goes on serving other tabs.
	require.NoError(t, within(t, "close", 5*time.Second, tab.Close))
	require.NoError(t, sharedConn.Err())
	next := newTab(t, serve("/after-storm", `<title>after</title>`))
	v, err := next.Evaluate(tctx(t, 5*time.Second), `() => document.title`)
	require.NoError(t, err)
	require.Equal(t, `"after"`, string(v))
}

func TestStormDialogsDismissed(t *testing.T)            { testStorm(t, false) }
func TestStormDialogsBeforeUnloadAccepted(t *testing.T) { testStorm(t, true) }

// TestStormStrandedDialogDetach navigates while the storm page shows a
// dialog: the browser closes that dialog for the navigation, the page's
// loop opens the next one at once, and that one can no longer be
// answered ("Not attached to an active page"). Turning the session's Page
// domain off with such a dialog made Chromium abort (bad_variant_access);
// Detach must leave the browser running.
func TestStormStrandedDialogDetach(t *testing.T) {
	tb, err := startChromium(tctx(t, 60*time.Second), testenv.Chromium(t), true, nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, tb.Close()) }()
	b := tb.Browser()

	stranded := make(chan struct{})
	var once sync.Once
	ctx := tctx(t, 60*time.Second)
	tab, err := b.NewTabWith(ctx, serve("/storm", stormPage), TabOptions{Log: func(a Action) {
		if a.Method == "dialog" && a.Outcome != "dismissed" {
			once.Do(func() { close(stranded) })
		}
	}})
	require.NoError(t, err)
	// The first dialog stays until the browser closes it for the navigation.
	closedEvents, err := tab.Client().Page.JavascriptDialogClosed(ctx)
	require.NoError(t, err)
	defer closedEvents.Close()
	showing, closedByBrowser := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(closedByBrowser)
		_, _ = closedEvents.Recv()
	}()
	var first sync.Once
	tab.HandleDialogs(func(Dialog) DialogAnswer {
		first.Do(func() {
			close(showing)
			<-closedByBrowser
		})
		return DialogAnswer{}
	})
	require.NoError(t, tab.Click(ctx, 50, 20))
	select {
	case <-showing:
	case <-ctx.Done():
		t.Fatal("the storm did not start")
	}
	gctx, cancel := context.WithCancel(ctx)
	gotoDone := make(chan error, 1)
	go func() {
		_, err := tab.Goto(gctx, serve("/storm-next", `<title>next</title>`), Load)
		gotoDone <- err
	}()
	select {
	case <-stranded:
	case <-ctx.Done():
		t.Fatal("the browser answered every dialog")
	}
	cancel()
	<-gotoDone
	require.True(t, tab.strandedDialog())

	require.NoError(t, tab.Detach(ctx))
	// The browser still answers, and opens and runs a new tab.
	next, err := b.NewTabWith(ctx, serve("/after-storm", `<title>after</title>`), TabOptions{})
	require.NoError(t, err, "the browser survived the detach")
	v, err := next.Evaluate(ctx, `() => document.title`)
	require.NoError(t, err)
	require.Equal(t, `"after"`, string(v))
	require.NoError(t, next.Close(ctx))
	// Closing the stranded page is safe, and with it the browser's session.
	_, err = b.Client().Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(tab.ID())))
	require.NoError(t, err)
	_, err = b.Client().Browser.GetVersion(ctx)
	require.NoError(t, err)
	require.NoError(t, b.Err())
}
