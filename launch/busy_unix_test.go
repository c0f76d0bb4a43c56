//go:build unix

package launch

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program still open for writing somewhere in the host's process (here
// by the test itself, in the wild by a fork between its fork and exec) is
// refused with ETXTBSY. The launch waits that out instead of failing as if
// the app had crashed.
func TestLaunchWaitsOutABusyProgram(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 30*time.Second)
	exe := fakeElectron(t, t.TempDir(), "busy", "#!/bin/sh\necho started >&2\nexit 3\n")
	w, err := os.OpenFile(exe, os.O_WRONLY, 0)
	require.NoError(t, err)
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(100 * time.Millisecond)
		w.Close()
	}()
	_, err = newLauncher(t).Launch(ctx, Spec{ExecutablePath: exe, Kind: KindElectron})
	<-released
	var le *Error
	require.ErrorAs(t, err, &le)
	require.NotNil(t, le.Diagnostics, "the app ran: %v", err)
	assert.Equal(t, "exit status 3", le.Diagnostics.Exit)
	assert.Equal(t, []string{"started"}, le.Diagnostics.Stderr)
}
