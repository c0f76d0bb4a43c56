package winetest

import (
	"os"
	"path/filepath"
	"testing"
)

// RootEnv names the directory under which TempDir makes its directories
// during a Wine run; the harness sets it and removes the directory after
// the run.
const RootEnv = "TRANQUIL_WINE_TMPROOT"

// TempDir returns a new empty directory for tb's files: tb.TempDir(),
// except in a Wine run. There it is a new directory under RootEnv's that
// nothing removes, since Wine 8 does not implement the file disposition
// call (FileDispositionInformationEx) that os.RemoveAll makes on Windows,
// so tb.TempDir's own cleanup would fail every test that wrote a file.
func TempDir(tb testing.TB) string {
	tb.Helper()
	root := os.Getenv(RootEnv)
	if root == "" {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp(root, "t")
	if err != nil {
		tb.Fatalf("winetest: %v", err)
	}
	return dir
}

// Wine reports whether this is a Wine run of the test binaries.
func Wine() bool { return os.Getenv(RootEnv) != "" }

// NoSymlinks is the reason a test that makes symbolic links is skipped in
// a Wine run: Wine 8's CreateSymbolicLinkW reports success and makes
// nothing, so such a test would check paths that have no link in them.
const NoSymlinks = "Wine 8 does not make symbolic links (CreateSymbolicLinkW succeeds without making one)"

// RequireSymlinks skips tb in a Wine run where a symbolic link made in a
// fresh directory does not read back as one. Elsewhere it does nothing: a
// system that cannot make links fails the test where it makes them.
func RequireSymlinks(tb testing.TB) {
	tb.Helper()
	if !Wine() {
		return
	}
	link := filepath.Join(TempDir(tb), "link")
	if err := os.Symlink("target", link); err == nil {
		if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return
		}
	}
	tb.Skip(NoSymlinks)
}
