package hosttest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/runner"
)

func TestTabsBehaveLikeABrowser(t *testing.T) {
	ctx := context.Background()
	var tabs Tabs
	_, err := tabs.Active(ctx, runner.RunInfo{})
	require.ErrorIs(t, err, ErrNoTab)
	a := tabs.Add("https://a.example/", "A")
	bg, err := tabs.Open(ctx, runner.RunInfo{}, "https://b.example/", runner.TabOpenOptions{Background: true})
	require.NoError(t, err)
	act, err := tabs.Active(ctx, runner.RunInfo{})
	require.NoError(t, err)
	assert.Equal(t, a, act, "a background tab does not become active")
	found, err := tabs.Find(ctx, runner.RunInfo{}, "b.example")
	require.NoError(t, err)
	assert.Equal(t, []runner.TabInfo{bg}, found)
	require.NoError(t, tabs.Focus(ctx, runner.RunInfo{}, bg.ID))
	assert.Equal(t, []string{bg.ID}, tabs.Focused())
	require.NoError(t, tabs.Close(ctx, runner.RunInfo{}, bg.ID))
	act, err = tabs.Active(ctx, runner.RunInfo{})
	require.NoError(t, err)
	assert.Equal(t, a, act, "closing the active tab shows the one before")
	require.ErrorIs(t, tabs.Close(ctx, runner.RunInfo{}, bg.ID), ErrNoTab)
	_, err = tabs.Target(ctx, runner.RunInfo{}, a.ID)
	require.ErrorIs(t, err, ErrNoPage)
}
