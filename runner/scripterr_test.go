package runner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// Errors a script sees, and the first error line the history keeps, name
// the script's line first, carry the SDK's code and say what to do, in
// words a script author knows.
func TestBrowserErrorsNameTheScriptLine(t *testing.T) {
	e := newBrowserEnv(t)
	for name, tc := range map[string]struct {
		src  string
		line string
		want []string
	}{
		"site": {
			src: `// @permissions browser forms sites=example.com
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.fill({ label: "Card holder" }, "Ada", { timeout: 300 });
`,
			line: ":4:",
			want: []string{"error: TabError (site_not_allowed): tab.fill:", "add 127.0.0.1 to sites="},
		},
		"wait": {
			src: fmt.Sprintf(`// @permissions browser
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto(%q);

await tab.waitFor("#never", { timeout: 200 });
`, e.site.URL+"/form"),
			line: ":6:",
			want: []string{"error: TabError (timeout): tab.waitFor:", `waited 200 ms for selector "#never"; last seen: no element matches it`, "pass a larger { timeout }"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			entry := e.run(t, name+".ts", tc.src)
			require.Equal(t, history.StateFailed, entry.State, entry.Output)
			for _, w := range tc.want {
				assert.Contains(t, entry.FirstError, w)
			}
			assert.Contains(t, entry.FirstError, name+".ts"+tc.line, "the first frame is the script's line")
			assert.Equal(t, entry.FirstError, entry.Reason)
			for _, bad := range []string{"browser.ts", "tab_gen.ts", "capnweb", "cdp", "context deadline", "Uncaught", "Caused by"} {
				assert.NotContains(t, entry.Output, bad)
			}
		})
	}
}

// A function whose result cannot come back as JSON fails with a code of
// its own, not the catch-all "error".
func TestEvaluateUnserializableResult(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnv(t)
	entry := e.run(t, "unser.ts", `// @permissions browser page-js
import { context, tabs, TabError } from "tranquil/automation";
const tab = await tabs.active();
const codes = [];
for (const f of [() => window, () => Symbol("x")]) {
  try { await tab.evaluate(f); codes.push("none"); } catch (e) { codes.push(e instanceof TabError ? e.code : String(e)); }
}
await context.result(codes);
`)
	var codes []string
	result(t, entry, &codes)
	assert.Equal(t, []string{"not_serializable", "not_serializable"}, codes)
}

// A form call the script did not await is cut off when the script ends:
// the run says so in its output and its history entry.
func TestForgottenAwaitIsAWarning(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnv(t)
	entry := e.run(t, "forgot.ts", fmt.Sprintf(`// @permissions browser forms sites=127.0.0.1
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto(%q);
tab.fill({ label: "Nowhere" }, "Ada", { timeout: 10000 });
`, e.site.URL+"/form"))
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	require.Len(t, entry.Warnings, 1, entry.Output)
	assert.Contains(t, entry.Warnings[0], "tab.fill was still running when the script ended")
	assert.Contains(t, entry.Warnings[0], "forgot.ts:5:")
	assert.Contains(t, entry.Output, "tranquil: warning: tab.fill")
	assert.True(t, strings.Contains(entry.Warnings[0], "await it"))
}
