package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

func TestLaunchRefusesLifecycleFlags(t *testing.T) {
	for _, a := range []string{"--user-data-dir=/tmp/x", "--remote-debugging-port=9222", "--remote-debugging-pipe"} {
		_, err := Chromium(context.Background(), Options{Path: testenv.Chromium(t), Args: []string{a}, TempDir: tempRoot})
		require.ErrorIs(t, err, ErrLaunch, a)
	}
	_, err := Chromium(context.Background(), Options{Path: "/nonexistent/chromium", TempDir: tempRoot})
	require.ErrorIs(t, err, ErrLaunch)
}

func TestLaunchCloseCleansUp(t *testing.T) {
	testenv.CheckGoroutines(t) // waiter, stderr drain and the pipe's reader
	ctx := tctx(t, 30*time.Second)
	p, err := Chromium(ctx, Options{Path: testenv.Chromium(t), TempDir: tempRoot})
	require.NoError(t, err)
	dir := p.DataDir()
	require.DirExists(t, dir)
	tab, err := p.Browser().NewTab(ctx, "")
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	require.NoDirExists(t, dir)
	<-p.Done()
	<-p.Browser().Done()
	require.ErrorIs(t, tab.Err(), cdp.ErrBrowserClosed)
	_, err = os.Stat(fmt.Sprintf("/proc/%d", p.Pid()))
	require.True(t, os.IsNotExist(err), "browser process still present")
	require.False(t, groupHasLive(p.Pid()), "a process of the browser's group still runs")
}

// TestLaunchListensOnNoPort: a launched Chromium is reachable only through
// its pipe. The check is shown to work on a browser that does listen.
func TestLaunchListensOnNoPort(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	p, err := Chromium(ctx, Options{Path: testenv.Chromium(t), TempDir: tempRoot})
	require.NoError(t, err)
	defer p.Close()
	// Pages load, so the network service and renderers are up too.
	tab, err := p.Browser().NewTab(ctx, serve("/no-port", `<title>no port</title>`))
	require.NoError(t, err)
	title, err := tab.Title(ctx)
	require.NoError(t, err)
	require.Equal(t, "no port", title)
	assert.Zero(t, p.Port())
	assert.Empty(t, p.Endpoint())
	_, err = os.Stat(p.DataDir() + "/DevToolsActivePort")
	assert.True(t, os.IsNotExist(err), "a pipe launch writes no DevToolsActivePort")
	assertNoListener(t, p.Pid())

	withPort := launchWithPort(t)
	assert.Contains(t, listeners(t, withPort.Pid()), withPort.Port(), "the listener check misses a real DevTools port")
}

// TestPipeLaunchDiagnostics: a "browser" that never answers on the pipe
// times out with diagnostics, and one that exits says so; neither leaves
// anything behind.
func TestPipeLaunchDiagnostics(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 30*time.Second)
	dir := t.TempDir()
	silent := dir + "/silent"
	require.NoError(t, os.WriteFile(silent, []byte("#!/bin/sh\necho 'silent: up' >&2\nexec sleep 600\n"), 0o755))
	quits := dir + "/quits"
	require.NoError(t, os.WriteFile(quits, []byte("#!/bin/sh\necho 'quits: bye' >&2\nexit 4\n"), 0o755))

	_, err := Chromium(ctx, Options{Path: silent, TempDir: tempRoot, StartTimeout: 500 * time.Millisecond})
	require.ErrorIs(t, err, ErrTimeout)
	assert.Equal(t, errcode.Timeout, errcode.Of(err), "cdp's one code table knows a launch's timeout")
	var le *Error
	require.ErrorAs(t, err, &le)
	require.NotNil(t, le.Diagnostics)
	assert.Equal(t, []string{"silent: up"}, le.Diagnostics.Stderr)
	assert.Empty(t, le.Diagnostics.PortFile, "a pipe launch has no port file")
	assert.False(t, browserproc.Alive(le.Diagnostics.PID))
	assert.NoDirExists(t, le.Diagnostics.ProfileDir)

	// The process can be gone before the connection is made or only
	// after: either way the error says how it ended. Many tries at once
	// see both orders.
	const tries = 48
	errs := make(chan error, tries)
	for i := 0; i < tries; i++ {
		go func() { errs <- quitsOnce(ctx, quits) }()
	}
	var failed []error
	for i := 0; i < tries; i++ {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	require.Empty(t, failed)
}

func quitsOnce(ctx context.Context, quits string) error {
	_, err := Chromium(ctx, Options{Path: quits, TempDir: tempRoot})
	var le *Error
	switch {
	case !errors.Is(err, ErrUpstream) || !errors.As(err, &le):
		return fmt.Errorf("not an upstream *Error: %w", err)
	case le.Diagnostics == nil:
		return fmt.Errorf("no diagnostics: %w", err)
	case le.Diagnostics.Exit != "exit status 4" || !strings.Contains(err.Error(), "exited before answering"):
		return fmt.Errorf("not said how it ended: %w", err)
	}
	if _, serr := os.Stat(le.Diagnostics.ProfileDir); !os.IsNotExist(serr) {
		return fmt.Errorf("profile %s left", le.Diagnostics.ProfileDir)
	}
	return nil
}
