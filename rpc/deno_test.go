package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/permissions"
)

// runClient runs testdata/sdk_client.ts in real deno against the bridge.
func runClient(t *testing.T, b *Bridge, token string, sdkCaps []permissions.Capability) (stdout, stderr string, code int) {
	t.Helper()
	deno := testenv.Deno(t)
	client, err := filepath.Abs("testdata/sdk_client.ts")
	require.NoError(t, err)
	caps, _ := json.Marshal(sdkCaps)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, deno, "run", "--no-prompt", "--no-lock", "--no-config",
		"--allow-net="+b.Addr(), "--allow-env=TRANQUIL_RPC_URL,TRANQUIL_RPC_TOKEN,TEST_SDK_CAPS", client)
	cmd.Env = append(cmd.Environ(), "TRANQUIL_RPC_URL="+b.RunURL(token), "TRANQUIL_RPC_TOKEN="+token, "TEST_SDK_CAPS="+string(caps), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), ee.ExitCode()
	}
	require.NoError(t, err, "stderr: %s", errOut.String())
	return out.String(), errOut.String(), 0
}

func TestDenoClientThroughBridge(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run7", permissions.CapUI, permissions.CapContext))
	require.NoError(t, err)
	out, errOut, code := runClient(t, r.b, tok, []permissions.Capability{"ui", "context", "tabs", "tab", "clipboard"})
	require.Equal(t, 0, code, "stderr: %s", errOut)
	var got struct {
		Granted    []string `json:"granted"`
		Notified   string   `json:"notified"`
		TabsAbsent bool     `json:"tabsAbsent"`
		TabsCall   string   `json:"tabsCall"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	// context is permitted, but this bridge's registry has no context
	// capability: the session cannot reach it, so it is not granted.
	assert.Equal(t, []string{"ui"}, got.Granted)
	assert.Equal(t, "run7:hello", got.Notified)
	assert.True(t, got.TabsAbsent, "an ungranted capability is absent")
	assert.Equal(t, "TypeError", got.TabsCall)
}

func TestDenoClientDenied(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run8", permissions.CapUI, permissions.CapClipboard))
	require.NoError(t, err)
	_, errOut, code := runClient(t, r.b, tok, []permissions.Capability{"ui"})
	assert.Equal(t, 3, code, "the SDK exits with its distinct code")
	assert.Contains(t, errOut, "this script cannot run")
	assert.Contains(t, errOut, "clipboard")
	assert.Contains(t, errOut, "0.1.0-test")
	r.nothingReachedCapnweb(t)
}

// flood keeps upgrading silent connections on the shared path until ctx
// ends, the way a script with the bridge's address could, and reports how
// many it made.
func flood(ctx context.Context, b *Bridge, workers int) (wait func() int64) {
	var wg sync.WaitGroup
	var n atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c, _, err := websocket.Dial(ctx, b.URL(), nil)
				if err != nil {
					continue
				}
				n.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.Read(ctx) // until the bridge drops it, or the test ends
					c.CloseNow()
				}()
			}
		}()
	}
	return func() int64 { wg.Wait(); return n.Load() }
}

// TestFloodCannotEvictARunsHandshake floods the shared path with silent
// handshakes, far past its pending bound, while real deno clients start on
// their own routes: each one still authenticates.
func TestFloodCannotEvictARunsHandshake(t *testing.T) {
	r := newRig(t, Config{MaxPending: 4})
	ctx, cancel := context.WithCancel(context.Background())
	wait := flood(ctx, r.b, 4)
	require.Eventually(t, func() bool { return r.b.Stats().Pending >= 4 }, 5*time.Second, time.Millisecond)
	for i := range 3 {
		tok, err := r.b.Mint(principal(fmt.Sprintf("run%d", i), permissions.CapUI))
		require.NoError(t, err)
		out, errOut, code := runClient(t, r.b, tok, []permissions.Capability{"ui"})
		require.Equal(t, 0, code, "run %d: stdout %s stderr: %s", i, out, errOut)
		assert.Contains(t, out, fmt.Sprintf("run%d:hello", i))
	}
	cancel()
	n := wait()
	t.Logf("%d flooding connections", n)
	assert.Greater(t, n, int64(100), "the flood was real")
}
