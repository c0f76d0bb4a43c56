package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	cmd.Env = append(cmd.Environ(), "TRANQUIL_RPC_URL="+b.URL(), "TRANQUIL_RPC_TOKEN="+token, "TEST_SDK_CAPS="+string(caps), "NO_COLOR=1")
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
	assert.Equal(t, []string{"context", "ui"}, got.Granted)
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
