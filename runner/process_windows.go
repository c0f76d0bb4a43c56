//go:build windows

package runner

import "os/exec"

// isolate does nothing on Windows yet: there is no process group to
// signal. Cancel still reaches the script through the protocol first, and
// kill ends the deno process itself.
func isolate(*exec.Cmd) {}

// terminate has no graceful signal to send on Windows; the protocol cancel
// is the graceful phase there, so it goes straight to kill.
func terminate(cmd *exec.Cmd) { kill(cmd) }

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
