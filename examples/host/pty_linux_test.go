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
	ctl, term := openPTY(t)
	defer ctl.Close()
	cmd := exec.Command(e.bin, "--data", e.data, "run", "--approve", script)
	cmd.Env = e.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(t, cmd.Start())
	term.Close()
	var out syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, ctl); close(copied) }() // ends when the terminal closes

	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "step \"wait for the user\" started") {
		require.True(t, time.Now().Before(deadline), "no progress shown:\n%s", out.String())
		time.Sleep(50 * time.Millisecond)
	}
	_, err := ctl.Write([]byte{3}) // Ctrl-C
	require.NoError(t, err)
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, exitCancelled, exit.ExitCode())
	ctl.Close()
	<-copied
	got := strings.ReplaceAll(out.String(), "\r\n", "\n")
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
	ctl, term := openPTY(t)
	defer ctl.Close()
	cmd := exec.Command(e.bin, "--data", e.data, "run", script)
	cmd.Env = e.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(t, cmd.Start())
	term.Close()
	var out syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, ctl); close(copied) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ended := false
	defer func() {
		if !ended { // the test failed first: do not leave the program behind
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "Allow this script to run") {
		require.True(t, time.Now().Before(deadline), "no prompt shown:\n%s", out.String())
		time.Sleep(50 * time.Millisecond)
	}
	_, err := ctl.Write([]byte{3}) // Ctrl-C
	require.NoError(t, err)
	select {
	case err = <-exited:
		ended = true
	case <-time.After(20 * time.Second):
		t.Fatalf("Ctrl-C at the consent prompt did not end the program:\n%s", out.String())
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, exitCancelled, exit.ExitCode())
	ctl.Close()
	<-copied
	got := strings.ReplaceAll(out.String(), "\r\n", "\n")
	assert.Contains(t, got, "interrupted (Ctrl-C): cancelling the run")
	assert.Contains(t, got, "reason: interrupted (Ctrl-C)")
	assert.NotContains(t, got, "exiting without waiting", "one Ctrl-C was enough")
}
