//go:build !linux && !windows

package proc

import "syscall"

// setPdeathsig does nothing where the kernel has no parent-death signal;
// the bootstrap exits when its bridge connection closes instead.
func setPdeathsig(*syscall.SysProcAttr) {}
