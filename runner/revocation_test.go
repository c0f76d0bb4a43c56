package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
)

// TestRevocationElsewhereKillsLiveRun revokes through a second store on
// the same data directory, as a second host or the example host's revoke
// command does: the live run ends, as one revoked through the manager's
// own store does.
func TestRevocationElsewhereKillsLiveRun(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "rev.ts", "// @permissions clipboard\n// @timeout none\nconsole.log(\"up\");\nawait new Promise(() => {});\n")
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "up")

	other, err := consent.OpenStore(filepath.Join(e.data, "consent.json"), consent.StoreOptions{})
	require.NoError(t, err)
	ok, err := other.Revoke(context.Background(), p)
	require.NoError(t, err)
	require.True(t, ok)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err, "the run outlived its revoked approval")
	assert.Equal(t, history.StateCancelled, entry.State)
	assert.Equal(t, "approval revoked", entry.Reason)
}
