//go:build unix

package cdp

import (
	"os"
	"syscall"
)

// killTree signals the browser's whole process group, so helpers started
// through wrapper scripts go too.
func killTree(p *os.Process, force bool) error {
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		return p.Signal(sig)
	}
	return nil
}
