//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package audit

import (
	"errors"
	"os"
)

// Supported reports whether runs' accesses can be recorded here.
const Supported = false

// openAuditPipe is not available here, so a run's accesses are not
// recorded. On Windows the pipe would be a named pipe, which
// golang.org/x/sys/windows makes without cgo, but deno 2.9 cannot write its
// report to one: it fails at start with "Invalid handle. (os error 6)"
// (deno 2.9.6, measured under Wine 10), while a plain file works. A plain
// file grows with every check a script makes, which a script could use to
// fill the disk, so it is not used in the pipe's place.
func openAuditPipe(string) (r, keep *os.File, err error) {
	return nil, nil, errors.ErrUnsupported
}
