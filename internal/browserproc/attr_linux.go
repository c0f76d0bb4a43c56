//go:build linux

package browserproc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// Attr puts the browser in its own process group, so that one signal ends
// every helper process, and asks the kernel to kill it if the launching
// thread dies, so a crashed host leaves no browser behind.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// zombie reports a process that has exited but is not yet reaped: it holds
// its pid but runs nothing.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
