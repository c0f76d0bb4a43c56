//go:build !windows

package proc

import (
	"os/exec"
	"syscall"
)

func signalOf(ee *exec.ExitError) string {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
