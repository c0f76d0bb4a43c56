package cdptabs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
)

// exitedPID returns the PID of a process that has exited and been reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// fakeProfile makes a profile directory as launch names and marks them,
// owned by host and used by browser.
func fakeProfile(t *testing.T, dir, name string, host, browser int) string {
	t.Helper()
	p := filepath.Join(dir, "tranquil-browser-"+name)
	require.NoError(t, os.MkdirAll(filepath.Join(p, "Default"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(p, "Default", "Cookies"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(p, "tranquil-owner"), fmt.Appendf(nil, "host=%d\nbrowser=%d\n", host, browser), 0o600))
	return p
}

// TestLaunchSweepsProfilesOfKilledHosts holds Launch to removing the
// profile a killed host left behind and keeping those of live processes.
func TestLaunchSweepsProfilesOfKilledHosts(t *testing.T) {
	dir := t.TempDir()
	// The go command that runs this test outlives it: a live process, not this one.
	livePID := os.Getppid()
	dead := exitedPID(t)

	stale := fakeProfile(t, dir, "stale", dead, dead)
	liveHost := fakeProfile(t, dir, "livehost", livePID, dead)
	liveBrowser := fakeProfile(t, dir, "livebrowser", dead, livePID)
	foreign := filepath.Join(dir, "someone-elses")
	require.NoError(t, os.Mkdir(foreign, 0o700))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tabs, err := Launch(ctx, launch.Options{Path: testenv.Chromium(t), TempDir: dir, Args: testenv.ChromiumArgs()})
	require.NoError(t, err)
	defer tabs.Shutdown()

	assert.NoDirExists(t, stale, "the profile of a dead host and browser stays")
	for _, p := range []string{liveHost, liveBrowser, foreign} {
		assert.DirExists(t, p, "a profile of a live process, or not ours, was removed")
	}
}
