//go:build unix && !linux

package browserproc

import "syscall"

// Attr puts the browser in its own process group so that one signal ends
// every helper process.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// zombie: without /proc, a zombie counts as alive, which only ever keeps a
// profile directory longer.
func zombie(int) bool { return false }
