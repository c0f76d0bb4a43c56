package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func TestResolve(t *testing.T) {
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
		{"/", "/", "/"},
	}
	for _, c := range cases {
		lex, real, err := Resolve(filepath.FromSlash(c.in))
		require.NoError(t, err, c.in)
		require.Equal(t, filepath.FromSlash(c.lexical), lex, c.in)
		require.Equal(t, filepath.FromSlash(c.real), real, c.in)
	}
}

func TestResolveLoop(t *testing.T) {
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

func TestContains(t *testing.T) {
	require.True(t, Contains("/a/b", "/a/b"))
	require.True(t, Contains("/a/b", "/a/b/c"))
	require.True(t, Contains("/", "/a"))
	require.False(t, Contains("/a/b", "/a/bc"))
	require.False(t, Contains("/a/b/c", "/a/b"))
}
