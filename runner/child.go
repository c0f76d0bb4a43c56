package runner

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"
)

// childSpec says how to start a run's deno process.
type childSpec struct {
	path string
	args []string
	dir  string
	env  []string
	// stdout and stderr receive the child's output; os/exec copies it
	// from pipes of its own, so Wait returns once both are drained.
	stdout, stderr io.Writer
	// memoryMB limits the child's memory (see contain); not positive
	// means no limit.
	memoryMB int
	// killGrace is how long the child has after SIGTERM before it is
	// killed, and how long its output pipes are read once it has exited
	// (exec.Cmd.WaitDelay).
	killGrace time.Duration
	log       *slog.Logger
}

// child is a run's deno process: its exec.Cmd, the process group (job
// object on Windows) holding whatever it starts, and its exit. The last
// two steps of its stop are the Cmd's own: terminate cancels the Cmd's
// context, whose Cancel sends SIGTERM to the group; Cmd.WaitDelay later
// kills the process, and closes its output pipes if something else still
// holds them. Its methods are safe for concurrent use.
type child struct {
	cmd  *exec.Cmd
	stop context.CancelFunc // ends the Cmd's context: SIGTERM, then WaitDelay
	done chan struct{}      // closed when the child has exited and its output is drained

	mu     sync.Mutex // guards the group once the child runs
	group  *processGroup
	closed bool // the child was waited for; its group is gone
}

// startChild starts deno as spec says, in a group of its own. The child
// is waited for on a goroutine of its own, which ends when the child has
// exited and its output is drained (at most killGrace later); then
// whatever the child started is killed, so nothing outlives it. A
// *startError means deno could not be started at all; any other error
// that it could not be contained (limited), and it was killed.
func startChild(spec childSpec) (*child, error) {
	ctx, stop := context.WithCancel(context.Background())
	c := &child{stop: stop, done: make(chan struct{})}
	cmd := exec.CommandContext(ctx, spec.path, spec.args...)
	cmd.Dir, cmd.Env = spec.dir, spec.env
	cmd.Stdout, cmd.Stderr = spec.stdout, spec.stderr
	cmd.Cancel = c.terminateGroup
	cmd.WaitDelay = spec.killGrace
	isolate(cmd)
	c.cmd = cmd
	if err := cmd.Start(); err != nil {
		stop()
		return nil, &startError{err}
	}
	g, err := contain(cmd, spec.memoryMB, spec.log)
	c.group = g
	if err != nil {
		_ = g.kill()
		_ = cmd.Wait()
		c.release()
		return nil, err
	}
	go c.wait()
	return c, nil
}

// startError is exec's error when deno could not be started at all.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// wait waits for the child, then ends its group. How the child ended is
// read from its ProcessState (see exit), not from Wait's error: that may
// be the cancel's or exec.ErrWaitDelay for a child that exited 0.
func (c *child) wait() {
	_ = c.cmd.Wait()
	c.release()
	close(c.done)
}

// release kills what is left of the child's group and closes it.
func (c *child) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The run is over: nothing it started may outlive it.
	_ = c.group.kill()
	c.group.close()
	c.closed = true
	c.stop()
}

// exited is closed once the child has exited and its output is drained.
func (c *child) exited() <-chan struct{} { return c.done }

// terminate starts the child's forced stop: SIGTERM to its group now
// (through exec.Cmd.Cancel), SIGKILL after killGrace (exec.Cmd.WaitDelay).
func (c *child) terminate() { c.stop() }

// terminateGroup is the Cmd's Cancel.
func (c *child) terminateGroup() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return os.ErrProcessDone
	}
	return c.group.terminate()
}

// kill stops the child and its whole group at once.
func (c *child) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		_ = c.group.kill()
	}
}

// exit says how the child ended, once exited is closed: its exit code
// (-1 when a signal ended it, or it never reported one) and the signal.
func (c *child) exit() (code int, signal string) {
	ps := c.cmd.ProcessState
	if ps == nil {
		return -1, ""
	}
	if ps.Success() {
		return 0, ""
	}
	ee := &exec.ExitError{ProcessState: ps}
	if sig := signalOf(ee); sig != "" {
		return -1, sig
	}
	return ps.ExitCode(), ""
}
