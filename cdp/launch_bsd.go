//go:build unix && !linux

package cdp

import "syscall"

// sysProcAttr puts the browser in its own process group so Close can end
// every helper process with one signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// zombie: without /proc, a zombie counts as alive, which only ever keeps a
// profile directory longer.
func zombie(int) bool { return false }
