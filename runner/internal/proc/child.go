package proc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/tranquil/automation/internal/execstart"
)

// ErrMemoryLimit reports a memory limit the system refused; the child was
// then killed. Package runner exports it as runner.ErrMemoryLimit.
var ErrMemoryLimit = errors.New("runner: memory limit")

// Spec says how to start a run's deno process.
type Spec struct {
	Path string
	Args []string
	// Dir is the child's working directory; "" is the host's.
	Dir string
	// Env is the child's whole environment; nil is the host's (exec.Cmd).
	Env []string
	// Stdout and Stderr receive the child's output; os/exec copies it
	// from pipes of its own, so Wait returns once both are drained. Nil
	// discards it.
	Stdout, Stderr io.Writer
	// MemoryMB limits the child's memory (see contain); not positive
	// means no limit.
	MemoryMB int
	// KillGrace is how long the child has after SIGTERM before it is
	// killed, and how long its output pipes are read once it has exited
	// (exec.Cmd.WaitDelay); zero never follows the SIGTERM with a kill
	// and reads the pipes until they close (a zero WaitDelay).
	KillGrace time.Duration
	// Log receives what goes wrong without failing the start (Windows:
	// no job object for a child without a memory limit). Nil discards it.
	Log *slog.Logger
}

// Child is a run's deno process: its exec.Cmd, the process group (job
// object on Windows) holding whatever it starts, and its exit. The last
// two steps of its stop are the Cmd's own: Terminate cancels the Cmd's
// context, whose Cancel sends SIGTERM to the group; Cmd.WaitDelay later
// kills the process, and closes its output pipes if something else still
// holds them. Its methods are safe for concurrent use.
type Child struct {
	cmd  *exec.Cmd
	stop context.CancelFunc // ends the Cmd's context: SIGTERM, then WaitDelay
	done chan struct{}      // closed when the child has exited and its output is drained

	mu     sync.Mutex // guards the group once the child runs
	group  *processGroup
	closed bool // the child was waited for; its group is gone
}

// Start starts deno as spec says, in a group of its own. The child is
// waited for on a goroutine of its own, which ends when the child has
// exited and its output is drained (at most KillGrace later); then
// whatever the child started is killed, so nothing outlives it. A
// *StartError means deno could not be started at all; any other error
// (ErrMemoryLimit) that it could not be contained (limited), and it was
// killed.
func Start(spec Spec) (*Child, error) {
	ctx, stop := context.WithCancel(context.Background())
	c := &Child{stop: stop, done: make(chan struct{})}
	cmd, err := execstart.Start(ctx, func() (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, spec.Path, spec.Args...)
		cmd.Dir, cmd.Env = spec.Dir, spec.Env
		cmd.Stdout, cmd.Stderr = spec.Stdout, spec.Stderr
		cmd.Cancel = c.terminateGroup
		cmd.WaitDelay = spec.KillGrace
		isolate(cmd)
		return cmd, nil
	})
	if err != nil {
		stop()
		return nil, &StartError{err}
	}
	c.cmd = cmd
	log := spec.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g, err := contain(cmd, spec.MemoryMB, log)
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

// StartError is exec's error when deno could not be started at all.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// wait waits for the child, then ends its group. How the child ended is
// read from its ProcessState (see Exit), not from Wait's error: that may
// be the cancel's or exec.ErrWaitDelay for a child that exited 0.
func (c *Child) wait() {
	_ = c.cmd.Wait()
	c.release()
	close(c.done)
}

// release kills what is left of the child's group and closes it.
func (c *Child) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The run is over: nothing it started may outlive it.
	_ = c.group.kill()
	c.group.close()
	c.closed = true
	c.stop()
}

// Exited is closed once the child has exited and its output is drained.
func (c *Child) Exited() <-chan struct{} { return c.done }

// Terminate starts the child's forced stop: SIGTERM to its group now
// (through exec.Cmd.Cancel), SIGKILL after KillGrace (exec.Cmd.WaitDelay).
func (c *Child) Terminate() { c.stop() }

// terminateGroup is the Cmd's Cancel.
func (c *Child) terminateGroup() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return os.ErrProcessDone
	}
	return c.group.terminate()
}

// Kill stops the child and its whole group at once.
func (c *Child) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		_ = c.group.kill()
	}
}

// Exit says how the child ended, once Exited is closed: its exit code
// (-1 when a signal ended it, or it never reported one) and the signal.
func (c *Child) Exit() (code int, signal string) {
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
