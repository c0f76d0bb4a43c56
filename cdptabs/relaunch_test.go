package cdptabs

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

// events collects what a Tabs tells its host.
type events chan BrowserEvent

func (e events) next(t *testing.T, ctx context.Context) BrowserEvent {
	t.Helper()
	select {
	case ev := <-e:
		return ev
	case <-ctx.Done():
		t.Fatal("the host was not told")
		return BrowserEvent{}
	}
}

func TestRelaunchAfterTheBrowserDies(t *testing.T) {
	srv := testenv.HTMLSite(`<title>kept</title>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	told := make(events, 4)
	tabs, err := LaunchWith(ctx, launch.Options{Path: testenv.Chromium(t), Args: testenv.ChromiumArgs()}, Config{OnBrowser: func(ev BrowserEvent) { told <- ev }})
	require.NoError(t, err)
	defer func() {
		require.NoError(t, tabs.Shutdown())
		require.Empty(t, told, "Shutdown is not reported")
	}()
	run := runner.RunInfo{ID: "in-flight"}

	// A run is driving a tab when the browser dies.
	info, err := tabs.Open(ctx, run, srv.URL, runner.TabOpenOptions{})
	require.NoError(t, err)
	target, err := tabs.Target(ctx, run, info.ID)
	require.NoError(t, err)
	tab, err := target.Browser.Attach(ctx, target.TargetID)
	require.NoError(t, err)
	old := tabs.Process()
	require.NoError(t, old.Kill())

	ev := told.next(t, ctx)
	require.Equal(t, BrowserGone, ev.Kind)
	require.True(t, ev.Launched)
	require.ErrorIs(t, ev.Err, cdp.ErrBrowserClosed)
	<-old.Done()
	_, err = os.Stat(old.DataDir())
	require.True(t, errors.Is(err, os.ErrNotExist), "the dead browser's profile is removed: %v", err)

	// The run in flight fails with "closed", on its session and on the tab.
	_, err = tab.Evaluate(ctx, `() => 1`)
	require.Equal(t, errcode.Closed, errcode.Of(err), "%v", err)
	_, err = tabs.Target(ctx, run, info.ID)
	require.Equal(t, errcode.Closed, errcode.Of(err), "%v", err)
	ev = told.next(t, ctx)
	require.Equal(t, BrowserRelaunched, ev.Kind, "the call above started a fresh browser")
	_, err = tabs.Active(ctx, run)
	require.ErrorIs(t, err, cdp.ErrBrowserClosed, "the run in flight gets no tab of the fresh browser")
	require.Equal(t, errcode.Closed, errcode.Of(err))

	// The next run gets the fresh browser.
	fresh := tabs.Process()
	require.NotSame(t, old, fresh)
	require.NotEqual(t, old.Pid(), fresh.Pid())
	active, err := tabs.Active(ctx, runner.RunInfo{ID: "next"})
	require.NoError(t, err)
	target, err = tabs.Target(ctx, runner.RunInfo{ID: "next"}, active.ID)
	require.NoError(t, err)
	require.Same(t, tabs.Browser(), target.Browser)
	next, err := target.Browser.Attach(ctx, target.TargetID)
	require.NoError(t, err)
	_, err = next.Goto(ctx, srv.URL, cdp.Load)
	require.NoError(t, err)
	title, err := next.Title(ctx)
	require.NoError(t, err)
	require.Equal(t, "kept", title)
	require.NoError(t, next.Detach(ctx))
}

func TestAttachedBrowserGoneIsOnlyReported(t *testing.T) {
	endpoint := testenv.ChromiumWithPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	told := make(events, 4)
	tabs, err := AttachWith(ctx, endpoint, Config{OnBrowser: func(ev BrowserEvent) { told <- ev }})
	require.NoError(t, err)
	defer tabs.Shutdown()
	_, err = tabs.All(ctx, runner.RunInfo{})
	require.NoError(t, err)

	// The user quits the browser.
	quit, err := cdp.Connect(ctx, endpoint, nil)
	require.NoError(t, err)
	defer quit.Close()
	_ = quit.Client().Browser.Close(ctx)

	ev := told.next(t, ctx)
	require.Equal(t, BrowserGone, ev.Kind)
	require.False(t, ev.Launched)
	require.ErrorIs(t, ev.Err, cdp.ErrBrowserClosed)

	// Nothing starts a browser in its place: calls fail with "closed".
	_, err = tabs.Active(ctx, runner.RunInfo{})
	require.ErrorIs(t, err, cdp.ErrBrowserClosed)
	require.Equal(t, errcode.Closed, errcode.Of(err))
	require.Nil(t, tabs.Process())
	require.Empty(t, told, "an attached browser is never relaunched")
}
