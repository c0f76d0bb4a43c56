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

// contain limits the started child's memory to memoryMB (none when it is
// not positive), where the system can (see limitMemory). The process
// group from isolate already holds everything the child starts, and kill
// signals it, so there is nothing to end.
func contain(cmd *exec.Cmd, memoryMB int, _ *slog.Logger) (end func(), err error) {
	if memoryMB > 0 {
		if err := limitMemory(cmd.Process.Pid, memoryMB); err != nil {
			return func() {}, err
		}
	}
	return func() {}, nil
}

func kill(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGKILL) }
