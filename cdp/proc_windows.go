//go:build windows

package cdp

import "syscall"

// pidAlive reports whether a process with this id still runs.
func pidAlive(pid int) bool {
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

// groupAlive: Windows has no process groups to probe; the launcher kills
// the process itself.
func groupAlive(int) bool { return false }
