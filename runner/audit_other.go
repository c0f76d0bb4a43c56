//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package runner

import (
	"errors"
	"os"
)

// auditPipes reports whether runs' accesses can be recorded here.
const auditPipes = false

// openAuditPipe is not available here: on Windows deno would need a named
// pipe, which the standard library cannot make without cgo or a new
// dependency, so a run's accesses are not recorded on Windows.
func openAuditPipe(string) (r, keep *os.File, err error) {
	return nil, nil, errors.ErrUnsupported
}
