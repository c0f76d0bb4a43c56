//go:build linux

package runner

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/internal/testenv"
)

// TestOrphanDiesWithHost SIGKILLs a host process mid-run: its deno child
// must be gone within 2 s, and the next manager sweeps the run's cache
// folder.
func TestOrphanDiesWithHost(t *testing.T) {
	if os.Getenv("RUNNER_HELPER_HOST") != "" {
		return
	}
	deno := testenv.Deno(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	script := filepath.Join(root, "forever.ts")
	require.NoError(t, os.WriteFile(script, []byte("// @permissions none\n// @timeout none\nconsole.log(\"PID \" + Deno.pid);\nawait new Promise(() => {});\n"), 0o644))

	cmd := exec.Command(os.Args[0], "-test.run=^TestRunnerHelperHost$", "-test.v")
	cmd.Env = append(os.Environ(), "RUNNER_HELPER_HOST=1", "RUNNER_HELPER_DATA="+filepath.Join(root, "data"),
		"RUNNER_HELPER_SCRIPT="+script, "TRANQUIL_DENO="+deno)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	pid := 0
	sc := bufio.NewScanner(out)
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "CHILD PID "); ok {
			pid, _ = strconv.Atoi(rest)
			break
		}
	}
	deadline.Stop()
	require.NotZero(t, pid, "the helper host never reported its deno child")
	require.True(t, alive(pid))

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	killed := time.Now()
	for alive(pid) {
		if time.Since(killed) > 2*time.Second {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("deno child %d outlived its host by more than 2 s", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The dead host left its run's cache folder; the next manager over
	// the same data dir removes it once it is old enough to be no other
	// manager's in the making.
	left, err := filepath.Glob(filepath.Join(root, "data", "runs", "run-*"))
	require.NoError(t, err)
	require.NotEmpty(t, left, "the killed host's run had a cache folder")
	aged := time.Now().Add(-2 * staleRunCache)
	for _, d := range left {
		require.NoError(t, os.Chtimes(d, aged, aged))
	}
	m, err := New(Config{DataDir: filepath.Join(root, "data"), DenoPath: deno})
	require.NoError(t, err)
	defer m.Close()
	for _, d := range left {
		_, err := os.Lstat(d)
		require.True(t, os.IsNotExist(err), "%s was swept", d)
	}
}

// alive reports whether pid runs (a zombie waiting for reaping is dead).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestRunnerHelperHost is the host process TestOrphanDiesWithHost kills.
func TestRunnerHelperHost(t *testing.T) {
	data := os.Getenv("RUNNER_HELPER_DATA")
	if data == "" {
		return // only meaningful when re-executed by TestOrphanDiesWithHost
	}
	store, err := consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
	require.NoError(t, err)
	m, err := New(Config{
		DataDir:  data,
		DenoPath: os.Getenv("TRANQUIL_DENO"),
		Gate:     consent.NewGate(store, nil),
		OnEvent: func(e Event) {
			if rest, ok := strings.CutPrefix(e.Line, "PID "); ok && e.Kind == EventOutput {
				fmt.Printf("CHILD PID %s\n", rest)
			}
		},
	})
	require.NoError(t, err)
	_, err = m.Start(context.Background(), Request{Script: os.Getenv("RUNNER_HELPER_SCRIPT")})
	require.NoError(t, err)
	select {} // until killed
}
