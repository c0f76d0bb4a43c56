package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// TestStartContextBoundsTheStartOnly holds Start to its documented ctx: a
// ctx done before Start starts and records nothing, and cancelling the ctx
// after Start returned leaves the run to finish.
func TestStartContextBoundsTheStartOnly(t *testing.T) {
	e := newMgr(t, nil)
	script := e.script(t, "slow.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\n"+
		"await new Promise((r) => setTimeout(r, 300));\nawait context.result(\"done\");\n")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := e.m.Start(ctx, Request{Script: script})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Nil(t, r)
	assert.Empty(t, e.m.Runs())
	assert.Empty(t, e.m.History().List(), "a start that never began recorded a run")

	ctx, cancel = context.WithCancel(context.Background())
	r, err = e.m.Start(ctx, Request{Script: script})
	require.NoError(t, err)
	cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer wcancel()
	entry, err := r.Wait(wctx)
	require.NoError(t, err)
	require.Equal(t, history.StateSucceeded, entry.State, "reason %q", entry.Reason)
	assert.JSONEq(t, `"done"`, string(entry.Result))
}
