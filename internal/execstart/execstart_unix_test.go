//go:build unix

package execstart_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/execstart"
)

func busyProgram(t *testing.T) (path string, w *os.File) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "prog")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\nexit 7\n"), 0o755))
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return path, w
}

func TestStartWaitsOutABusyProgram(t *testing.T) {
	path, w := busyProgram(t)
	time.AfterFunc(50*time.Millisecond, func() { w.Close() })
	builds := 0
	cmd, err := execstart.Start(context.Background(), func() (*exec.Cmd, error) {
		builds++
		return exec.Command(path), nil
	})
	require.NoError(t, err)
	var exit *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &exit)
	assert.Equal(t, 7, exit.ExitCode())
	assert.Greater(t, builds, 1, "the first start met the busy program")
}

func TestStartGivesUpOnAProgramThatStaysBusy(t *testing.T) {
	path, _ := busyProgram(t)
	start := time.Now()
	_, err := execstart.Start(context.Background(), func() (*exec.Cmd, error) { return exec.Command(path), nil })
	assert.ErrorIs(t, err, syscall.ETXTBSY)
	assert.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	_, err = execstart.Start(ctx, func() (*exec.Cmd, error) { return exec.Command(path), nil })
	assert.ErrorIs(t, err, syscall.ETXTBSY)
	assert.Less(t, time.Since(start), 100*time.Millisecond, "an ended context stops the retries")
}

func TestStartPassesOtherErrorsAtOnce(t *testing.T) {
	builds := 0
	_, err := execstart.Start(context.Background(), func() (*exec.Cmd, error) {
		builds++
		return exec.Command(filepath.Join(t.TempDir(), "missing")), nil
	})
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, 1, builds)
}
