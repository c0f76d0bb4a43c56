package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	require.NoError(t, WriteFile(p, []byte("one"), 0o600))
	require.NoError(t, WriteFile(p, []byte("two"), 0o600))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestWriteFileFailureLeavesTargetAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	require.NoError(t, WriteFile(p, []byte("keep"), 0o600))
	// Renaming a file over a directory fails, after the temp file exists.
	bad := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(bad, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "x"), nil, 0o600))
	require.Error(t, WriteFile(bad, []byte("x"), 0o600))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2)
	data, _ := os.ReadFile(p)
	assert.Equal(t, "keep", string(data))
}

func TestIsTemp(t *testing.T) {
	assert.True(t, IsTemp(".state.json.tmp-123", "state.json"))
	assert.False(t, IsTemp("state.json", "state.json"))
	assert.False(t, IsTemp(".other.tmp-1", "state.json"))
}
