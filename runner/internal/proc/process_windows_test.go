//go:build windows

package proc

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"

	"github.com/tranquil/automation/internal/winetest"
)

// standInEnv makes this test binary, started again, a stand-in for deno:
// a small Windows program whose behaviour the test picks, so that the
// child supervision (job objects, cancel, kill, exit codes) is tested
// without deno.
const standInEnv = "RUNNER_STANDIN"

func init() {
	if mode := os.Getenv(standInEnv); mode != "" {
		os.Exit(standIn(mode))
	}
}

// standIn is the stand-in's main. Modes:
//
//	exit:N    exit with code N
//	sleep     print "ready", then wait forever, ignoring interrupts
//	spawn     start a sleeping grandchild, print "pid N", wait forever
//	orphan    the same, then exit 0 at once, leaving the grandchild
//	alloc:MB  commit MB megabytes, print "allocated", exit 0
//	host      start a sleeping child with Start, as the runner does,
//	          print "pid N", then exit without ending it
func standIn(mode string) int {
	signal.Ignore(os.Interrupt)
	name, arg, _ := strings.Cut(mode, ":")
	switch name {
	case "exit":
		n, _ := strconv.Atoi(arg)
		return n
	case "sleep":
		fmt.Println("ready")
		sleep()
	case "spawn", "orphan":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), standInEnv+"=sleep")
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			return 3
		}
		fmt.Println("pid", cmd.Process.Pid)
		if name == "orphan" {
			return 0
		}
		sleep()
	case "alloc":
		mb, _ := strconv.Atoi(arg)
		b := make([]byte, mb<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("allocated", len(b)>>20)
		return 0
	case "host":
		c, err := Start(Spec{Path: os.Args[0], Env: append(os.Environ(), standInEnv+"=sleep"),
			Stdout: io.Discard, Stderr: io.Discard, KillGrace: time.Minute, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Println("error", err)
			return 3
		}
		fmt.Println("pid", c.cmd.Process.Pid)
		os.Exit(0) // no release: only the job's closing can end the child
	}
	return 4
}

// sleep waits until the process is killed. (An empty select would be
// reported as a deadlock, there being no other goroutine.)
func sleep() {
	for {
		time.Sleep(time.Hour)
	}
}

// standInChild starts the stand-in as the runner starts deno and returns
// it with a reader of its standard output.
func standInChild(t *testing.T, mode string, memoryMB int) (*Child, *bufio.Reader) {
	t.Helper()
	return started(t, Spec{Path: os.Args[0], Env: append(os.Environ(), standInEnv+"="+mode),
		Dir: t.TempDir(), Stderr: os.Stderr, MemoryMB: memoryMB,
		KillGrace: time.Minute, Log: slog.New(slog.DiscardHandler)})
}

// openPid opens the process pid printed in line ("pid N") to wait for it;
// a handle keeps its PID from being reused.
func openPid(t *testing.T, line string) windows.Handle {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	require.NoError(t, err, line)
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	require.NoError(t, err, "the grandchild %d runs", pid)
	t.Cleanup(func() {
		windows.TerminateProcess(h, 1) // a failed test leaves nothing running
		windows.CloseHandle(h)
	})
	return h
}

// ended waits up to d for the process h to end.
func ended(h windows.Handle, d time.Duration) bool {
	ev, err := windows.WaitForSingleObject(h, uint32(d.Milliseconds()))
	return err == nil && ev == windows.WAIT_OBJECT_0
}

func TestChildExitCodes(t *testing.T) {
	for _, code := range []int{0, 1, 7, 255} {
		c, _ := standInChild(t, "exit:"+strconv.Itoa(code), 0)
		wait(t, c)
		got, sig := c.Exit()
		assert.Equal(t, code, got)
		assert.Empty(t, sig, "Windows has no signals")
	}
}

// TestChildTerminateKillsAtOnce: Windows has no SIGTERM for a console
// child to catch, so terminate ends the job at once rather than after
// killGrace (a minute here), even for a child that ignores interrupts.
func TestChildTerminateKillsAtOnce(t *testing.T) {
	c, out := standInChild(t, "sleep", 0)
	require.Equal(t, "ready", line(t, out))
	start := time.Now()
	c.Terminate()
	wait(t, c)
	assert.Less(t, time.Since(start), 20*time.Second)
	code, sig := c.Exit()
	assert.Equal(t, 1, code, "TerminateJobObject's exit code")
	assert.Empty(t, sig)
}

// TestChildKillEndsItsGrandchildren: a kill ends what the child started,
// as a run= command a script spawned, through the job object.
func TestChildKillEndsItsGrandchildren(t *testing.T) {
	c, out := standInChild(t, "spawn", 0)
	g := openPid(t, line(t, out))
	require.False(t, ended(g, 0), "the grandchild runs before the kill")
	c.Kill()
	wait(t, c)
	assert.True(t, ended(g, 10*time.Second), "the grandchild was killed with the child")
}

// TestChildExitEndsWhatItLeft: a child that exits on its own leaves
// nothing running: its job is ended when it is waited for.
func TestChildExitEndsWhatItLeft(t *testing.T) {
	c, out := standInChild(t, "orphan", 0)
	g := openPid(t, line(t, out))
	wait(t, c)
	code, _ := c.Exit()
	assert.Equal(t, 0, code)
	assert.True(t, ended(g, 10*time.Second), "the orphaned grandchild was killed")
}

// TestChildDiesWithItsHost: when the host process dies without ending a
// run, Windows closes its job handle, and JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
// ends the child.
func TestChildDiesWithItsHost(t *testing.T) {
	host := exec.Command(os.Args[0])
	host.Env = append(os.Environ(), standInEnv+"=host")
	out, err := host.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, host.Start())
	r := bufio.NewReader(out)
	first := line(t, r)
	require.True(t, strings.HasPrefix(first, "pid "), first)
	g := openPid(t, first)
	// Not read to its end: a child that outlived the host could hold the
	// pipe (Wine lets children inherit it); Wait closes it.
	require.NoError(t, host.Wait())
	assert.True(t, ended(g, 10*time.Second), "the child outlived its host")
}

// TestChildMemoryCap: the job's memory limit (JOB_OBJECT_LIMIT_JOB_MEMORY)
// makes an allocation past it fail, which ends a Go program; one under
// it goes through.
func TestChildMemoryCap(t *testing.T) {
	c, out := standInChild(t, "alloc:16", 256)
	assert.Equal(t, "allocated 16", line(t, out))
	wait(t, c)
	code, _ := c.Exit()
	require.Equal(t, 0, code, "an allocation under the cap")

	c, _ = standInChild(t, "alloc:256", 64)
	wait(t, c)
	code, _ = c.Exit()
	if code == 0 && winetest.Wine() {
		t.Skipf("%s: 256 MB were committed under a 64 MB cap", winetest.NoJobMemoryLimit)
	}
	assert.NotEqual(t, 0, code, "an allocation past the cap ends the child")
}
