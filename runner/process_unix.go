//go:build !windows

package runner

import (
	"log/slog"
	"os/exec"
	"syscall"
)

// isolate puts the child in its own process group, so that a cancel
// reaches everything it started (run= grants spawn children), and on
// Linux asks the kernel to kill it if the host dies.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

// signalGroup sends sig to the child's whole process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

func terminate(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGTERM) }

// contain has nothing to add on Unix: the process group from isolate
// already holds everything the child starts, and kill signals it.
func contain(*exec.Cmd, *slog.Logger) (end func()) { return func() {} }
func kill(cmd *exec.Cmd)                           { signalGroup(cmd, syscall.SIGKILL) }
