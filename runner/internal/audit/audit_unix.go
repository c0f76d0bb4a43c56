//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package audit

import (
	"os"
	"syscall"
)

// Supported reports whether runs' accesses can be recorded here.
const Supported = true

// openAuditPipe makes a FIFO at path, readable and writable by the host's
// user only, and opens its read end, then a write end the host keeps.
// Both opens are non-blocking: the read end needs no writer yet, and the
// write end finds the reader already there. Deno's own open (File::create,
// a blocking open for writing) then returns at once.
func openAuditPipe(path string) (r, keep *os.File, err error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, nil, &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	r, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	keep, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, keep, nil
}
