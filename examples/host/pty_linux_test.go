package main

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair without cgo: the controlling side
// for the test, the terminal for the program.
func openPTY(t *testing.T) (ctl, term *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("the terminal test needs a pseudo-terminal (/dev/ptmx): %v", err)
	}
	require.NoError(t, unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	term, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	return ctl, term
}

// ptyRun is the host program running on a pseudo-terminal of its own.
type ptyRun struct {
	cmd    *exec.Cmd
	ctl    *os.File
	out    syncBuffer
	copied chan struct{} // closed when the terminal has closed
	exited chan error    // cmd.Wait's answer
}

// startOnPTY runs the host program with args as the session leader of a
// new terminal, so that a Ctrl-C typed there is its SIGINT.
func (e *hostEnv) startOnPTY(t *testing.T, args ...string) *ptyRun {
	t.Helper()
	ctl, term := openPTY(t)
	t.Cleanup(func() { ctl.Close() })
	cmd := exec.Command(e.bin, append([]string{"--data", e.data}, args...)...)
	cmd.Env = e.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(t, cmd.Start())
	term.Close()
	p := &ptyRun{cmd: cmd, ctl: ctl, copied: make(chan struct{}), exited: make(chan error, 1)}
	go func() { io.Copy(&p.out, ctl); close(p.copied) }() // ends when the terminal closes
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-p.exited: // ctrlC puts its answer back
		default: // the test failed first: do not leave the program behind
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitFor waits until the terminal has shown want.
func (p *ptyRun) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.out.String(), want) {
		require.True(t, time.Now().Before(deadline), "%q not shown:\n%s", want, p.out.String())
		time.Sleep(50 * time.Millisecond)
	}
}

// ctrlC types Ctrl-C and waits up to d for the program to exit with
// code; then it returns all the terminal showed.
func (p *ptyRun) ctrlC(t *testing.T, d time.Duration, code int) string {
	t.Helper()
	_, err := p.ctl.Write([]byte{3})
	require.NoError(t, err)
	select {
	case err = <-p.exited:
		p.exited <- err // for the cleanup
	case <-time.After(d):
		t.Fatalf("Ctrl-C did not end the program within %s:\n%s", d, p.out.String())
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, code, exit.ExitCode())
	p.ctl.Close()
	<-p.copied
	return strings.ReplaceAll(p.out.String(), "\r\n", "\n")
}

// In a terminal the host shows a run's steps and progress as they happen,
// and Ctrl-C (typed, so the terminal sends SIGINT) cancels the run
// cleanly: the reason, no stack.
func TestTerminalShowsProgressAndCancelsCleanly(t *testing.T) {
	e := newHostEnv(t)
	script := e.script("progress.ts")
	require.NoError(t, os.WriteFile(script, []byte(`// @permissions none
// @timeout none
import { context, step } from "tranquil/automation";
await step.do("load", () => 1);
context.progress("half way", 0.5);
await step.sleep("wait for the user", 600000);
`), 0o644))
	p := e.startOnPTY(t, "run", "--approve", script)
	p.waitFor(t, `step "wait for the user" started`)
	got := p.ctrlC(t, 60*time.Second, exitCancelled)
	for _, want := range []string{
		`step "load" started`, `step "load" done`, " 50% half way",
		"interrupted (Ctrl-C): cancelling the run",
		`step "wait for the user" failed: interrupted (Ctrl-C)`,
		" cancelled", "reason: interrupted (Ctrl-C)",
	} {
		assert.Contains(t, got, want)
	}
	for _, bad := range []string{"CancelledError", "    at ", "Uncaught"} {
		assert.NotContains(t, got, bad)
	}
}

// Ctrl-C while the consent prompt waits for an answer cancels the run and
// the program exits: the prompt is taken down, nothing is approved.
func TestCtrlCAtTheConsentPromptExits(t *testing.T) {
	e := newHostEnv(t)
	script := e.script("asks.ts")
	require.NoError(t, os.WriteFile(script, []byte(`// @permissions clipboard
import { context } from "tranquil/automation";
await context.result("ran");
`), 0o644))
	p := e.startOnPTY(t, "run", script)
	p.waitFor(t, "Allow this script to run")
	got := p.ctrlC(t, 20*time.Second, exitCancelled)
	assert.Contains(t, got, "interrupted (Ctrl-C): cancelling the run")
	assert.Contains(t, got, "reason: interrupted (Ctrl-C)")
	assert.NotContains(t, got, "exiting without waiting", "one Ctrl-C was enough")
}
