package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/runner"
)

// startScript writes and starts a script in the environment's folder.
func (e *browserEnv) startScript(t testing.TB, name, src string) *runner.Run {
	t.Helper()
	p := filepath.Join(e.dir, name)
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	r, err := e.m.Start(context.Background(), runner.Request{Script: p})
	require.NoError(t, err)
	return r
}

// waitLine waits until run r printed a line containing want; it fails at
// once when r ends first.
func (e *browserEnv) waitLine(t testing.TB, r *runner.Run, want string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		e.outMu.Lock()
		seen := slices.ContainsFunc(e.lines, func(l string) bool { return strings.Contains(l, want) })
		e.outMu.Unlock()
		if seen {
			return
		}
		select {
		case <-r.Done():
			entry, _ := r.Wait(context.Background())
			t.Fatalf("the run ended %s before printing %q: %s\n%s", entry.State, want, entry.Reason, entry.Output)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no output %q", want)
}

// A browser that dies under a run gives every browser call the documented
// code closed, and nothing a script sees names a DevTools endpoint: not
// the one the runner held, nor the one it would reconnect to.
func TestDeadBrowserIsClosedAndNamesNoEndpoint(t *testing.T) {
	for name, o := range map[string]envOptions{
		"launched-killed":             {},
		"attached-closed":             {devtoolsPort: true},
		"attached-closed-by-endpoint": {devtoolsPort: true, byEndpoint: true},
	} {
		attached := o.devtoolsPort
		t.Run(name, func(t *testing.T) {
			e := newBrowserEnvWith(t, o)
			r := e.startScript(t, "dies.ts", `// @permissions browser read=go
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.url();
console.log("READY");
for (;;) {
  try { Deno.statSync("go"); break; } catch { await new Promise((r) => setTimeout(r, 20)); }
}
const calls: [string, () => Promise<unknown>][] = [
  ["tab.url", () => tab.url()],
  ["tab.goto", () => tab.goto("`+e.site.URL+`/p/1")],
  ["tab.url again", () => tab.url()],
  ["tabs.active", () => tabs.active()],
  ["tabs.all", () => tabs.all()],
  ["tabs.open", () => tabs.open("`+e.site.URL+`/p/2", { background: true })],
];
const out: Record<string, string> = {};
for (const [name, call] of calls) {
  try { await call(); out[name] = "resolved"; } catch (err) { out[name] = (err as { code?: string }).code + " | " + String(err) + " | " + (err as Error).stack; }
}
await context.result(out);
`)
			e.waitLine(t, r, "READY")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if attached {
				_ = e.tabs.Browser().Client().Browser.Close(ctx)
			} else {
				require.NoError(t, e.tabs.Process().Kill())
			}
			select {
			case <-e.tabs.Browser().Done():
			case <-ctx.Done():
				t.Fatal("the connection outlived the browser")
			}
			require.NoError(t, os.WriteFile(filepath.Join(e.dir, "go"), nil, 0o644))
			entry, err := r.Wait(ctx)
			require.NoError(t, err)
			var got map[string]string
			result(t, entry, &got)
			require.Len(t, got, 6)
			for call, outcome := range got {
				code, _, _ := strings.Cut(outcome, " | ")
				assert.Equal(t, "closed", code, "%s: %s", call, outcome)
				for _, leak := range []string{"devtools", "ws://", "DevToolsActivePort"} {
					assert.NotContains(t, strings.ToLower(outcome), strings.ToLower(leak), "%s: %s", call, outcome)
				}
				if attached {
					assert.NotContains(t, outcome, ":"+strconv.Itoa(e.tabs.Port()), "%s: %s", call, outcome)
				}
			}
			assert.NotContains(t, strings.ToLower(entry.Output), "/devtools/", "the run's output")
		})
	}
}
