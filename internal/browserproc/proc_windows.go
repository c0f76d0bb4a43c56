//go:build windows

package browserproc

import (
	"os"
	"syscall"
)

// Attr starts the browser in a new process group.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// KillTree kills the browser process. Windows has no polite signal for a
// GUI process, so both modes kill.
func KillTree(p *os.Process, force bool) error { return p.Kill() }

// Alive reports whether a process with this id still runs.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	const processQueryLimitedInformation = 0x1000
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if syscall.GetExitCodeProcess(h, &code) != nil {
		return false
	}
	const stillActive = 259
	return code == stillActive
}

// GroupAlive: Windows has no process groups to probe; the launcher kills
// the process itself.
func GroupAlive(int) bool { return false }
