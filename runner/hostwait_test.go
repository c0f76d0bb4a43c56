package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// stuckHost never answers a call before the call's context ends.
type stuckHost struct{}

func stuck(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

func (stuckHost) Notify(ctx context.Context, _ RunInfo, _ string, _ Level) error { return stuck(ctx) }
func (stuckHost) Open(ctx context.Context, _ RunInfo, _ string, _ OpenOptions) error {
	return stuck(ctx)
}
func (stuckHost) Read(ctx context.Context, _ RunInfo) (string, error)  { return "", stuck(ctx) }
func (stuckHost) Write(ctx context.Context, _ RunInfo, _ string) error { return stuck(ctx) }
func (stuckHost) ProjectDir(ctx context.Context, _ RunInfo) (string, error) {
	return "", stuck(ctx)
}

// stuckTabs is a browser host that never answers either.
type stuckTabs struct{ stuckHost }

func (stuckTabs) Active(ctx context.Context, _ RunInfo) (TabInfo, error) {
	return TabInfo{}, stuck(ctx)
}
func (stuckTabs) Find(ctx context.Context, _ RunInfo, _ string) ([]TabInfo, error) {
	return nil, stuck(ctx)
}
func (stuckTabs) All(ctx context.Context, _ RunInfo) ([]TabInfo, error) { return nil, stuck(ctx) }
func (stuckTabs) Open(ctx context.Context, _ RunInfo, _ string, _ TabOpenOptions) (TabInfo, error) {
	return TabInfo{}, stuck(ctx)
}
func (stuckTabs) Close(ctx context.Context, _ RunInfo, _ string) error { return stuck(ctx) }
func (stuckTabs) Focus(ctx context.Context, _ RunInfo, _ string) error { return stuck(ctx) }
func (stuckTabs) Target(ctx context.Context, _ RunInfo, _ string) (TabTarget, error) {
	return TabTarget{}, stuck(ctx)
}

// Calls into a host that never answers end after the default wait, with
// code timeout, and the script goes on: ui, clipboard, workspace, and the
// tabs' active, find, all and open (whose turn for a slot comes at once).
func TestHostCallsHaveADefaultTimeout(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newMgr(t, func(c *Config) {
		c.Host = Host{UI: stuckHost{}, Clipboard: stuckHost{}, Workspace: stuckHost{}, Tabs: stuckTabs{}}
	})
	start := time.Now()
	entry := e.runScript(t, "stuck.ts", `// @permissions browser clipboard
import { clipboard, context, tabs, ui, workspace } from "tranquil/automation";
const calls: Record<string, () => Promise<unknown>> = {
  notify: () => ui.notify("hi"),
  open: () => ui.open("a.txt"),
  read: () => clipboard.read(),
  write: () => clipboard.write("x"),
  projectDir: () => workspace.projectDir(),
  active: () => tabs.active(),
  find: () => tabs.find("x"),
  all: () => tabs.all(),
  tabsOpen: () => tabs.open("http://127.0.0.1:1/"),
};
const out: Record<string, unknown> = {};
await Promise.all(Object.entries(calls).map(async ([name, f]) => {
  const start = Date.now();
  try {
    await f();
    out[name] = { ok: true };
  } catch (err) {
    const e = err as { code: string; message: string };
    out[name] = { code: e.code, message: e.message, ms: Date.now() - start };
  }
}));
await context.result(out);
`)
	took := time.Since(start)
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	var res map[string]struct {
		OK            bool
		Code, Message string
		Ms            float64
	}
	require.NoError(t, json.Unmarshal(entry.Result, &res))
	require.Len(t, res, 9)
	for name, o := range res {
		assert.Equal(t, "timeout", o.Code, "%s: %+v", name, o)
		assert.InDelta(t, defaultTabWait.Milliseconds(), o.Ms, 5000, "%s: %+v", name, o)
	}
	t.Logf("%d calls ended after the default wait; the run took %v", len(res), took)
}
