package launch

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

// orphanHelperEnv turns the test binary into a host that launches a
// browser, reports it on stdout and waits to be killed.
const orphanHelperEnv = "CDP_ORPHAN_HELPER_TEMPDIR"

func orphanHelper() int {
	chromium, err := testenv.LookChromium()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := NewLauncher(LauncherOptions{TempDir: os.Getenv(orphanHelperEnv)})
	inst, err := l.Launch(ctx, Spec{ExecutablePath: chromium, Kind: KindChromium})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d %s\n", inst.Pid(), inst.DataDir())
	time.Sleep(time.Hour) // until the test kills this process
	return 0
}

// TestOrphanedBrowserDies kills the host that launched a browser, without
// any cleanup running: the kernel's parent-death signal must end the
// browser within 2 s. Its profile directory leaks (nothing is left to
// remove it), and the next Launcher in that directory sweeps it.
func TestOrphanedBrowserDies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanHelperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	var pid int
	var profile string
	_, err = fmt.Sscanf(strings.TrimSpace(line), "%d %s", &pid, &profile)
	require.NoError(t, err, line)
	require.True(t, browserproc.Alive(pid))

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	killed := time.Now()
	require.Eventually(t, func() bool { return !browserproc.Alive(pid) && !groupHasLive(pid) }, 2*time.Second, 20*time.Millisecond,
		"browser outlived its host by more than 2s")
	t.Logf("browser gone %s after its host was killed", time.Since(killed).Round(time.Millisecond))

	// The profile leaks: the dead host could not remove it.
	require.DirExists(t, profile, "expected the orphan's profile to be left behind")
	l := NewLauncher(LauncherOptions{TempDir: dir})
	assert.Equal(t, []string{profile}, l.Swept())
	assert.NoDirExists(t, profile)
}
