package cdptabs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

// launchTabs starts a browser for the test, with a context bounding it.
func launchTabs(t *testing.T) (context.Context, *Tabs) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	tabs, err := Launch(ctx, launch.Options{Path: testenv.Chromium(t), Args: testenv.ChromiumArgs()})
	require.NoError(t, err)
	t.Cleanup(func() { tabs.Shutdown() })
	return ctx, tabs
}

func TestTabs(t *testing.T) {
	srv := httptest.NewServer(testenv.LoopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<title>page %s</title>", r.URL.Path)
	})))
	defer srv.Close()
	ctx, tabs := launchTabs(t)
	run := runner.RunInfo{ID: "r"}

	first, err := tabs.Active(ctx, run)
	require.NoError(t, err)
	fg, err := tabs.Open(ctx, run, srv.URL+"/fg", runner.TabOpenOptions{})
	require.NoError(t, err)
	bg, err := tabs.Open(ctx, run, srv.URL+"/bg", runner.TabOpenOptions{Background: true})
	require.NoError(t, err)
	assert.NotEqual(t, fg.ID, bg.ID)

	active, err := tabs.Active(ctx, run)
	require.NoError(t, err)
	assert.Equal(t, fg.ID, active.ID, "a foreground open becomes active; a background one does not")

	require.Eventually(t, func() bool {
		found, err := tabs.Find(ctx, run, "/bg")
		return err == nil && len(found) == 1 && found[0].ID == bg.ID
	}, 10*time.Second, 20*time.Millisecond)
	all, err := tabs.All(ctx, run)
	require.NoError(t, err)
	assert.Len(t, all, 3)

	require.NoError(t, tabs.Focus(ctx, run, first.ID))
	active, _ = tabs.Active(ctx, run)
	assert.Equal(t, first.ID, active.ID)

	// Runs drive tabs over the host's own pipe connection: there is no
	// endpoint to hand out, nor one to deny.
	target, err := tabs.Target(ctx, run, bg.ID)
	require.NoError(t, err)
	assert.Same(t, tabs.Browser(), target.Browser)
	assert.Equal(t, bg.ID, target.TargetID)
	assert.Empty(t, target.Endpoint)
	assert.Empty(t, tabs.Endpoint())
	assert.Zero(t, tabs.Port())
	assert.Empty(t, tabs.DevToolsEndpoints())
	tab, err := target.Browser.Attach(ctx, target.TargetID)
	require.NoError(t, err)
	assert.Equal(t, bg.ID, tab.ID())
	require.NoError(t, tab.Detach(ctx))

	require.NoError(t, tabs.Close(ctx, run, bg.ID))
	require.Eventually(t, func() bool {
		all, err := tabs.All(ctx, run)
		for _, p := range all {
			if p.ID == bg.ID {
				return false
			}
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	require.ErrorIs(t, tabs.Close(ctx, run, bg.ID), ErrNoTab, "a closed tab cannot be closed again")
	require.ErrorIs(t, tabs.Focus(ctx, run, "nope"), ErrNoTab)
}

// TestAttachKeepsPort: a browser the host did not launch is reached over
// its port, which every run is then denied.
func TestAttachKeepsPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := testenv.ChromiumWithPort(t)
	tabs, err := Attach(ctx, addr)
	require.NoError(t, err)
	defer tabs.Shutdown()
	hostPort := strings.TrimPrefix(addr, "http://")
	assert.Equal(t, []string{hostPort}, tabs.DevToolsEndpoints())
	assert.Equal(t, hostPort, fmt.Sprintf("127.0.0.1:%d", tabs.Port()))
	assert.Equal(t, addr, tabs.Endpoint())

	run := runner.RunInfo{ID: "r"}
	active, err := tabs.Active(ctx, run)
	require.NoError(t, err)
	target, err := tabs.Target(ctx, run, active.ID)
	require.NoError(t, err)
	assert.Same(t, tabs.Browser(), target.Browser)
	assert.Equal(t, addr, target.Endpoint)
}

func TestAttachRefusesNonLoopback(t *testing.T) {
	for _, ep := range []string{"ws://192.0.2.1:9222/devtools/browser/x", "http://example.com:9222", "::bad"} {
		_, err := Attach(context.Background(), ep)
		assert.Error(t, err, ep)
	}
}

// TestActiveIsTheShownTab: the active tab is the one the browser shows;
// tabs opened in the background never are, and closing the shown tab
// shows the one shown before it. A closed tab is gone from All when Close
// returns.
func TestActiveIsTheShownTab(t *testing.T) {
	ctx, tabs := launchTabs(t)
	run := runner.RunInfo{ID: "r"}
	active := func() string {
		t.Helper()
		a, err := tabs.Active(ctx, run)
		require.NoError(t, err)
		return a.ID
	}
	listed := func(id string) bool {
		t.Helper()
		all, err := tabs.All(ctx, run)
		require.NoError(t, err)
		return slices.ContainsFunc(all, func(p runner.TabInfo) bool { return p.ID == id })
	}
	first := active()
	var bgs []string
	for range 5 {
		bg, err := tabs.Open(ctx, run, "about:blank", runner.TabOpenOptions{Background: true})
		require.NoError(t, err)
		bgs = append(bgs, bg.ID)
		assert.Equal(t, first, active(), "a background tab is not the one shown")
	}
	fg, err := tabs.Open(ctx, run, "about:blank", runner.TabOpenOptions{})
	require.NoError(t, err)
	assert.Equal(t, fg.ID, active())
	require.NoError(t, tabs.Close(ctx, run, fg.ID))
	assert.False(t, listed(fg.ID), "a closed tab is gone when Close returns")
	assert.Equal(t, first, active(), "the tab shown before is shown again")

	require.NoError(t, tabs.Focus(ctx, run, bgs[2]))
	assert.Equal(t, bgs[2], active(), "a focused tab is shown")
	require.NoError(t, tabs.Close(ctx, run, bgs[2]))
	assert.Equal(t, first, active())
	for _, id := range bgs {
		if id != bgs[2] {
			require.NoError(t, tabs.Close(ctx, run, id))
			assert.False(t, listed(id))
		}
	}
	assert.Equal(t, first, active())
}
