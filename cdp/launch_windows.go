//go:build windows

package cdp

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killTree kills the browser process. Windows has no polite signal for a
// GUI process, so both modes kill.
func killTree(p *os.Process, force bool) error { return p.Kill() }
