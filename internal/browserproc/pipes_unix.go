//go:build !windows

package browserproc

import (
	"os"
	"os/exec"
)

// PassPipes hands the browser its ends of the debugging pipes as fds 3
// (it reads) and 4 (it writes), where --remote-debugging-pipe looks for
// them.
func PassPipes(cmd *exec.Cmd, browserReads, browserWrites *os.File) ([]string, error) {
	cmd.ExtraFiles = []*os.File{browserReads, browserWrites}
	return []string{"--remote-debugging-pipe"}, nil
}
