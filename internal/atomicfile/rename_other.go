//go:build !windows

package atomicfile

import "os"

// rename replaces path with tmp; POSIX rename replaces a file others
// have open.
func rename(tmp, path string) error { return os.Rename(tmp, path) }
