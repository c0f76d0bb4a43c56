package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/winetest"
)

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func TestResolve(t *testing.T) {
	winetest.RequireSymlinks(t)
	root := realTemp(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "f.txt"), nil, 0o644))
	require.NoError(t, os.Symlink("..", filepath.Join(root, "a", "b", "up")))
	require.NoError(t, os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "abs")))
	require.NoError(t, os.Symlink("nowhere/yet", filepath.Join(root, "dangling")))

	cases := []struct{ in, lexical, real string }{
		{root + "/a/f.txt", root + "/a/f.txt", root + "/a/f.txt"},
		{root + "/a/./b/../f.txt", root + "/a/f.txt", root + "/a/f.txt"},
		{root + "/a/b/up", root + "/a/b/up", root + "/a"},
		{root + "/a/b/up/new/deeper", root + "/a/b/up/new/deeper", root + "/a/new/deeper"},
		{root + "/abs/b", root + "/abs/b", root + "/a/b"},
		{root + "/dangling/x", root + "/dangling/x", root + "/nowhere/yet/x"},
		{root + "/missing/x", root + "/missing/x", root + "/missing/x"},
		{vol + "/", vol + "/", vol + "/"},
	}
	for _, c := range cases {
		lex, real, err := Resolve(filepath.FromSlash(c.in))
		require.NoError(t, err, c.in)
		require.Equal(t, filepath.FromSlash(c.lexical), lex, c.in)
		require.Equal(t, filepath.FromSlash(c.real), real, c.in)
	}
}

func TestResolveLoop(t *testing.T) {
	winetest.RequireSymlinks(t)
	root := realTemp(t)
	require.NoError(t, os.Symlink("b", filepath.Join(root, "a")))
	require.NoError(t, os.Symlink("a", filepath.Join(root, "b")))
	_, _, err := Resolve(filepath.Join(root, "a", "x"))
	require.True(t, errors.Is(err, ErrLinkLoop), "got %v", err)
}

func TestResolveRelative(t *testing.T) {
	_, _, err := Resolve("rel/path")
	require.Error(t, err)
}

// vol is the volume of the absolute paths the tests write: none on Unix,
// a drive on Windows, where a path without one is not absolute.
var vol = map[bool]string{true: "C:", false: ""}[runtime.GOOS == "windows"]

// abs makes a slash-separated test path absolute on this system.
func abs(p string) string { return filepath.FromSlash(vol + p) }

func TestContains(t *testing.T) {
	require.True(t, Contains(abs("/a/b"), abs("/a/b")))
	require.True(t, Contains(abs("/a/b"), abs("/a/b/c")))
	require.True(t, Contains(abs("/"), abs("/a")))
	require.False(t, Contains(abs("/a/b"), abs("/a/bc")))
	require.False(t, Contains(abs("/a/b/c"), abs("/a/b")))
}
