//go:build !windows

package proc

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shChild starts /bin/sh -c script as the runner starts deno.
func shChild(t *testing.T, script string, killGrace time.Duration) (*Child, *bufio.Reader) {
	t.Helper()
	return started(t, Spec{Path: "/bin/sh", Args: []string{"-c", script}, Dir: t.TempDir(), Stderr: os.Stderr, KillGrace: killGrace})
}

// alive reports whether the process pid still runs (a zombie counts as
// gone: nothing is left of it but its exit).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func TestChildExitCodes(t *testing.T) {
	for _, code := range []int{0, 1, 7, 255} {
		c, _ := shChild(t, "exit "+strconv.Itoa(code), time.Minute)
		wait(t, c)
		got, sig := c.Exit()
		assert.Equal(t, code, got)
		assert.Empty(t, sig)
	}
}

func TestStartErrorWhenNotStarted(t *testing.T) {
	_, err := Start(Spec{Path: "/nonexistent/deno"})
	var se *StartError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestChildTerminateThenKill: Terminate sends SIGTERM to the group, which
// a child may catch; one that ignores it is killed KillGrace later.
func TestChildTerminateThenKill(t *testing.T) {
	c, out := shChild(t, `trap 'echo term; exit 3' TERM; echo ready; while :; do sleep 0.05; done`, time.Minute)
	require.Equal(t, "ready", line(t, out))
	c.Terminate()
	wait(t, c)
	assert.Equal(t, "term", line(t, out))
	code, _ := c.Exit()
	assert.Equal(t, 3, code)

	c, out = shChild(t, `trap '' TERM; echo ready; while :; do sleep 0.05; done`, 300*time.Millisecond)
	require.Equal(t, "ready", line(t, out))
	start := time.Now()
	c.Terminate()
	wait(t, c)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "the grace before the kill")
	code, sig := c.Exit()
	assert.Equal(t, -1, code)
	assert.Equal(t, "killed", sig)
}

// TestChildKillEndsItsGrandchildren: Kill ends what the child started, as
// a run= command a script spawned, through the process group; and a child
// that exits on its own leaves nothing of its group running.
func TestChildKillEndsItsGrandchildren(t *testing.T) {
	c, out := shChild(t, `sleep 60 & echo $!; wait`, time.Minute)
	g, err := strconv.Atoi(line(t, out))
	require.NoError(t, err)
	require.True(t, alive(g), "the grandchild runs before the kill")
	c.Kill()
	wait(t, c)
	require.Eventually(t, func() bool { return !alive(g) }, 10*time.Second, 20*time.Millisecond, "the grandchild was killed with the child")

	c, out = shChild(t, `sleep 60 >/dev/null 2>&1 & echo $!`, time.Minute)
	g, err = strconv.Atoi(line(t, out))
	require.NoError(t, err)
	wait(t, c)
	code, _ := c.Exit()
	assert.Equal(t, 0, code)
	require.Eventually(t, func() bool { return !alive(g) }, 10*time.Second, 20*time.Millisecond, "the orphaned grandchild was killed")
}

// script is a run's side of a stop, as the runner supplies it.
type script struct {
	reason string
	killed bool
	mu     sync.Mutex
	sent   []string // protocol cancels taken
	cuts   int
	noSess bool
}

func (s *script) CancelReason() (string, bool) { return s.reason, s.killed }
func (s *script) ProtocolCancel() func(context.Context, string) {
	if s.noSess {
		return nil
	}
	return func(_ context.Context, reason string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.sent = append(s.sent, reason)
	}
}
func (s *script) CutCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cuts++
}

// TestSuperviseSteps: a cancel sends the protocol cancel and cuts the
// calls under way, then after the grace SIGTERM; a kill skips both; a
// timeout says so; a child that exits on its own is just waited for.
func TestSuperviseSteps(t *testing.T) {
	const stubborn = `trap 'echo term; exit 3' TERM; echo ready; while :; do sleep 0.05; done`
	t.Run("cancel", func(t *testing.T) {
		c, out := shChild(t, stubborn, time.Minute)
		require.Equal(t, "ready", line(t, out))
		cancel := make(chan struct{})
		close(cancel)
		s := &script{reason: "stop now"}
		start := time.Now()
		assert.Empty(t, Supervise(c, Stops{Cancel: cancel, Grace: 200 * time.Millisecond}, s))
		assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "the grace")
		assert.Equal(t, "term", line(t, out), "SIGTERM after the grace")
		assert.Equal(t, []string{"stop now"}, s.sent)
		assert.Equal(t, 1, s.cuts)
	})
	t.Run("kill", func(t *testing.T) {
		c, out := shChild(t, stubborn, time.Minute)
		require.Equal(t, "ready", line(t, out))
		cancel, kill := make(chan struct{}), make(chan struct{})
		close(cancel)
		close(kill)
		s := &script{reason: "killed", killed: true}
		assert.Empty(t, Supervise(c, Stops{Cancel: cancel, Kill: kill, Grace: time.Minute}, s))
		_, sig := c.Exit()
		assert.Equal(t, "killed", sig)
		assert.Empty(t, s.sent)
		assert.Zero(t, s.cuts)
	})
	t.Run("timeout", func(t *testing.T) {
		c, out := shChild(t, stubborn, time.Minute)
		require.Equal(t, "ready", line(t, out))
		s := &script{noSess: true}
		assert.Equal(t, "timed out after 100ms", Supervise(c, Stops{Timeout: 100 * time.Millisecond}, s))
		assert.Equal(t, 1, s.cuts, "no session: the calls are cut at once")
	})
	t.Run("exit", func(t *testing.T) {
		c, _ := shChild(t, "exit 0", time.Minute)
		assert.Empty(t, Supervise(c, Stops{Timeout: time.Minute}, &script{}))
		code, _ := c.Exit()
		assert.Equal(t, 0, code)
	})
}
