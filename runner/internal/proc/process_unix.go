//go:build !windows

package proc

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
)

// isolate puts the child in its own process group, so that a stop
// reaches everything it started (run= grants spawn children), and on
// Linux asks the kernel to kill it if the host dies.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

// processGroup is the process group isolate gave a started child: its
// ID is the child's PID.
type processGroup struct{ pgid int }

// contain returns the started child's group and limits the child's memory
// to memoryMB (none when it is not positive), where the system can (see
// limitMemory). The group already holds everything the child starts.
func contain(cmd *exec.Cmd, memoryMB int, _ *slog.Logger) (*processGroup, error) {
	g := &processGroup{pgid: cmd.Process.Pid}
	if memoryMB > 0 {
		if err := limitMemory(cmd.Process.Pid, memoryMB); err != nil {
			return g, err
		}
	}
	return g, nil
}

// signal sends sig to every process of the group; a group with no
// process left reports os.ErrProcessDone.
func (g *processGroup) signal(sig syscall.Signal) error {
	err := syscall.Kill(-g.pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// terminate asks every process of the group to stop (SIGTERM).
func (g *processGroup) terminate() error { return g.signal(syscall.SIGTERM) }

// kill stops every process of the group at once (SIGKILL).
func (g *processGroup) kill() error { return g.signal(syscall.SIGKILL) }

// close releases the group; a process group needs no release.
func (g *processGroup) close() {}
