package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/leakcheck"
)

// A tab that goes through what starts goroutines (a refused service
// worker, cross-site frames, a refused document, a dialog, lookups)
// leaves none behind once closed: each went through its task group,
// which is empty after Close.
func TestTabTasksEndWithTheTab(t *testing.T) {
	before := leakcheck.Snapshot()
	const prefix = "/tasks-sw/"
	swPage := serveWorkerSite(prefix)
	framesURL := framesPage()
	refused := serve("/tasks/refused", `<!doctype html><iframe src="data:text/html,refused"></iframe>`)
	log := &actionLog{}
	ctx := tctx(t, 60*time.Second)
	tab, err := sharedConn.NewTabWith(ctx, swPage, TabOptions{Log: log.add, RefuseServiceWorkers: true})
	require.NoError(t, err)

	_, err = tab.Evaluate(ctx, registerRefusedWorker, prefix)
	require.NoError(t, err)
	_, err = tab.Goto(ctx, refused, Load)
	require.NoError(t, err)
	_, err = tab.Goto(ctx, framesURL, Load)
	require.NoError(t, err)
	_, err = tab.Resolve(ctx, Locator{Label: "Security code"}) // two levels of cross-site frames
	for errors.Is(err, errcode.NotFound) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		_, err = tab.Resolve(ctx, Locator{Label: "Security code"})
	}
	require.NoError(t, err)
	_, err = tab.Evaluate(ctx, `() => { setTimeout(() => alert("tasks"), 0); }`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(log.dialogs()) == 1 }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, tab.Close(ctx))
	running, started := tab.tasks.counts()
	require.Zero(t, running, "tasks left: %s", tab.tasks.left())
	for _, name := range []string{"session watch", "service worker unregistration", "refuse document",
		"frame watch", "frame setup", "lookup release", "dialog answer"} {
		require.Positive(t, started[name], "a %q task ran (all started: %v)", name, started)
	}
	// Chromium's idle connections to the test server keep goroutines of
	// their own; only this package's count.
	var ours []string
	for _, g := range before.Since(leakcheck.Grace) {
		if strings.Contains(g, "automation/cdp.") {
			ours = append(ours, g)
		}
	}
	require.Empty(t, ours, "goroutines of the tab outlived it")
}

// A task that does not end when its tab does is reported by name, and not
// waited for past the group's bound; one that ends is not reported.
func TestTabTasksLeftAreReported(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	tab, err := sharedConn.NewTabWith(ctx, "", TabOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tab.Close(context.Background()) })
	tab.tasks.wait = 300 * time.Millisecond
	release := make(chan struct{})
	ended := make(chan struct{})
	tab.tasks.Go("stuck", func(context.Context) {
		defer close(ended)
		<-release
	})
	tab.tasks.Go("polite", func(ctx context.Context) { <-ctx.Done() })

	start := time.Now()
	err = tab.Detach(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, ErrTasksRunning)
	require.Equal(t, fmt.Sprintf("%v: stuck (1)", ErrTasksRunning), err.Error())
	require.Less(t, took, 3*time.Second, "Detach stopped waiting at the bound")
	require.Error(t, tab.Err(), "the session ended all the same")

	close(release)
	<-ended
	require.Eventually(t, func() bool { n, _ := tab.tasks.counts(); return n == 0 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, tab.Detach(ctx), "a second Detach has nothing left to report")
}
