//go:build darwin

package pathguard

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContainsComparesAsTheVolumeDoes: on a volume that ignores case (APFS
// as formatted by default) Data and DATA are one folder to Contains, as
// they are to the file system; on a case-sensitive one they are two. The
// file system itself is the oracle: it finds DATA or it does not.
func TestContainsComparesAsTheVolumeDoes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	data := filepath.Join(root, "Data")
	require.NoError(t, os.Mkdir(data, 0o755))
	_, err = os.Stat(filepath.Join(root, "DATA"))
	insensitive := err == nil
	t.Logf("the volume of %s ignores case: %v", root, insensitive)
	assert.Equal(t, insensitive, Contains(data, filepath.Join(root, "DATA", "x.txt")))
	assert.Equal(t, insensitive, Contains(filepath.Join(root, "data"), data))
	assert.Equal(t, insensitive, Contains(filepath.Join(root, "data", "new"), filepath.Join(data, "NEW")), "a missing path is asked through its existing prefix")
	assert.False(t, Contains(data, filepath.Join(root, "Database")))
	assert.False(t, Contains(data, filepath.Join(root, "Other")))
}
