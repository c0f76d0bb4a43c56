//go:build windows

package pathguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// TestContainsIgnoresCase: Windows names C:\Data and c:\DATA the same
// folder, so a guard comparing them byte for byte would let a grant
// spelled in another case reach a protected folder.
func TestContainsIgnoresCase(t *testing.T) {
	assert.True(t, Contains(`C:\data`, `c:\DATA\x`))
	assert.True(t, Contains(`C:\data`, `C:\DATA`))
	assert.True(t, Contains(`c:\`, `C:\x`))
	assert.True(t, Contains(`C:\Users\Me\AppData`, `c:\users\me\appdata\tranquil\consent.json`))
	assert.False(t, Contains(`C:\data`, `C:\database`))
	assert.False(t, Contains(`C:\data`, `D:\data\x`))
}

// TestResolveUsesNamesOnDisk: the real form spells existing folders as
// they are on disk, whatever case the path was written in; what does not
// exist yet is kept as written.
func TestResolveUsesNamesOnDisk(t *testing.T) {
	root := realTemp(t)
	require.NoError(t, os.Mkdir(filepath.Join(root, "Mixed Case Folder"), 0o755))
	in := filepath.Join(root, "MIXED CASE FOLDER", "New.txt")
	lex, real, err := Resolve(in)
	require.NoError(t, err)
	assert.Equal(t, in, lex)
	assert.Equal(t, filepath.Join(root, "Mixed Case Folder", "New.txt"), real)
}

// TestResolveExpandsShortNames: an 8.3 short name (LONGFO~1) names the
// same folder as its long name; the real form is the long one.
func TestResolveExpandsShortNames(t *testing.T) {
	root := realTemp(t)
	long := filepath.Join(root, "A Long Folder Name")
	require.NoError(t, os.Mkdir(long, 0o755))
	short := testenv.ShortPath(t, long)
	if strings.EqualFold(short, long) {
		t.Skip("this volume makes no 8.3 short names")
	}
	_, real, err := Resolve(filepath.Join(short, "x.txt"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(long, "x.txt"), real)
	assert.True(t, Contains(long, real))
}

// TestResolveRefusesDriveRelative: C:foo is relative to drive C's current
// folder and \foo to the current drive; neither is absolute.
func TestResolveRefusesDriveRelative(t *testing.T) {
	for _, p := range []string{`C:foo`, `C:`, `\foo`, `/foo`} {
		_, _, err := Resolve(p)
		assert.Error(t, err, p)
	}
}
