package winetest

import (
	"os"
	"path/filepath"
	"testing"
)

// NoSymlinks is the reason a test that makes symbolic links is skipped in
// a Wine run: Wine's CreateSymbolicLinkW (10.0 as 8.0) reports success and
// makes nothing, so such a test would check paths that have no link in
// them.
const NoSymlinks = "Wine does not make symbolic links (CreateSymbolicLinkW succeeds without making one)"

// RequireSymlinks skips tb under Wine when a symbolic link made in a fresh
// directory does not read back as one. Elsewhere it does nothing: a system
// that cannot make links fails the test where it makes them.
func RequireSymlinks(tb testing.TB) {
	tb.Helper()
	if !Wine() {
		return
	}
	link := filepath.Join(tb.TempDir(), "link")
	if err := os.Symlink("target", link); err == nil {
		if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return
		}
	}
	tb.Skip(NoSymlinks)
}

// NoJobMemoryLimit is the reason a test of the job object's memory cap is
// skipped in a Wine run where the cap did not hold: Wine (10.0 as 8.0)
// accepts JOB_OBJECT_LIMIT_JOB_MEMORY and does not enforce it.
const NoJobMemoryLimit = "Wine accepts a job object's memory limit (JOB_OBJECT_LIMIT_JOB_MEMORY) and does not enforce it"
