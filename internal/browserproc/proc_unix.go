//go:build unix

package browserproc

import (
	"errors"
	"os"
	"syscall"
)

// KillTree signals the browser's whole process group, so helpers started
// through wrapper scripts go too: SIGTERM, or SIGKILL when force is set.
func KillTree(p *os.Process, force bool) error {
	sig := syscall.SIGTERM
	if force {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		return p.Signal(sig)
	}
	return nil
}

// Alive reports whether a process with this id runs (a zombie does not).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return (err == nil || errors.Is(err, syscall.EPERM)) && !zombie(pid)
}

// GroupAlive reports whether any process is left in the process group.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
