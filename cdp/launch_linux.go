//go:build linux

package cdp

import "syscall"

// sysProcAttr puts the browser in its own process group and asks the kernel
// to kill it if the launching thread dies, so a crashed host leaves no
// browser behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
