package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/internal/testenv"
)

// stuckApp writes a launcher script that runs Chromium and, like an app
// that ignores the polite signal, stays alive until it is killed.
func stuckApp(t *testing.T) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "stuck-app")
	body := "#!/bin/sh\ntrap '' TERM\n" + strconv.Quote(testenv.Chromium(t)) + " \"$@\"\nexec sleep 60\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	return script
}

// A stuck app must not hold a host's quit past the cleanup budget: the
// whole Cleanup call, for every launch at once, ends within it.
func TestCleanupKeepsOneBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		budget time.Duration // LauncherOptions.CleanupBudget
		ctx    time.Duration // the caller's deadline; 0 for none
	}{
		{name: "launcher budget", budget: 2 * time.Second},
		{name: "context deadline", ctx: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := tctx(t, 60*time.Second)
			l := NewLauncher(LauncherOptions{TempDir: tempRoot, CleanupBudget: tc.budget})
			app := stuckApp(t)
			var insts []*Process
			for range 2 {
				inst, err := l.Launch(ctx, Spec{ExecutablePath: app, Kind: KindChromium})
				require.NoError(t, err)
				insts = append(insts, inst)
			}
			cctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(cctx, tc.ctx)
				defer cancel()
			}
			start := time.Now()
			reports, err := l.Cleanup(cctx)
			took := time.Since(start)
			require.NoError(t, err, "a killed app is cleaned up within the budget")
			// Each app ignores SIGTERM: the old stop gave it 3 s, then
			// up to 5 s more, one app after the other.
			assert.Less(t, took, 2500*time.Millisecond, "two stuck apps cleaned within a 2 s budget")
			assert.Greater(t, took, 600*time.Millisecond, "the app had its grace before the kill")
			require.Len(t, reports, 2)
			for i, r := range reports {
				assert.True(t, r.OK(), "%+v", r)
				assertGone(t, insts[i].Pid(), insts[i].Port(), insts[i].DataDir())
			}
		})
	}
}

// A cancelled context still gets the kill: the launch ends, and what
// could not finish in time is reported, never waited for.
func TestCleanupCancelledStillKills(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	l := newLauncher(t)
	inst, err := l.Launch(ctx, Spec{ExecutablePath: stuckApp(t), Kind: KindChromium})
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, _ = l.Cleanup(cctx, inst.ID)
	assert.Less(t, time.Since(start), time.Second)
	select {
	case <-inst.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stuck app was not killed")
	}
}
