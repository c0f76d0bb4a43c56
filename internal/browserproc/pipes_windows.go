//go:build windows

package browserproc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// PassPipes hands the browser its ends of the debugging pipes. Windows
// has no fds 3 and 4 to inherit (exec.Cmd.ExtraFiles is unsupported), so
// the two handles are inherited explicitly and named by
// --remote-debugging-io-pipes=<read>,<write>. Only the listed handles are
// inherited, so a concurrent launch cannot pick these up.
func PassPipes(cmd *exec.Cmd, browserReads, browserWrites *os.File) ([]string, error) {
	hs := []syscall.Handle{syscall.Handle(browserReads.Fd()), syscall.Handle(browserWrites.Fd())}
	for _, h := range hs {
		if err := syscall.SetHandleInformation(h, syscall.HANDLE_FLAG_INHERIT, syscall.HANDLE_FLAG_INHERIT); err != nil {
			return nil, fmt.Errorf("launch: inheritable pipe handle: %w", err)
		}
	}
	cmd.SysProcAttr.AdditionalInheritedHandles = append(cmd.SysProcAttr.AdditionalInheritedHandles, hs...)
	return []string{"--remote-debugging-pipe", fmt.Sprintf("--remote-debugging-io-pipes=%d,%d", hs[0], hs[1])}, nil
}
