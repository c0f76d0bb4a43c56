//go:build windows

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWriteFileWaitsForAReader: a reader holding the file open (as Go
// opens files: no FILE_SHARE_DELETE) blocks Windows' replace; WriteFile
// goes through once it lets go instead of failing with access denied.
func TestWriteFileWaitsForAReader(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	r, err := os.Open(p)
	require.NoError(t, err)
	// Closed while WriteFile runs: it is far quicker than 200ms, so it
	// meets the open handle at least once.
	release := time.AfterFunc(200*time.Millisecond, func() { r.Close() })
	defer release.Stop()
	start := time.Now()
	require.NoError(t, WriteFile(p, []byte("new"), 0o600))
	require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, "the replace waited for the reader")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new", string(got))
}

// TestWriteFileGivesUpOnALastingLock: a handle that stays open fails the
// write after renameWait, with the old content in place and no temp left.
func TestWriteFileGivesUpOnALastingLock(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	r, err := os.Open(p)
	require.NoError(t, err)
	defer r.Close()
	require.Error(t, WriteFile(p, []byte("new"), 0o600))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the temporary file is removed")
}
