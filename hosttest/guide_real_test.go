package hosttest_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/internal/testenv"
)

// guideScripts lists the guide's whole scripts (blocks whose header has an
// @permissions line), as runner's TestGuideSnippets takes them.
func guideScripts(t *testing.T) []testenv.GuideBlock {
	t.Helper()
	guide, err := os.ReadFile(filepath.Join("..", "runner", "sdk", "writing-automations.md"))
	require.NoError(t, err)
	blocks, err := testenv.GuideBlocks(string(guide))
	require.NoError(t, err)
	var out []testenv.GuideBlock
	for _, b := range blocks {
		if b.Script {
			out = append(out, b)
		}
	}
	return out
}

// realGuideRun is how TestGuideScriptsOnTheRealHost runs one of the
// guide's scripts: where the first tab opens, and what the run must have
// done. Each is runner's guideRuns entry of the same marker on real pages
// (testdata/sites, testdata/pages) that do what that entry's fake options
// say, checked as that entry's check is.
type realGuideRun struct {
	marker string // a line of the script, guideRuns' marker
	start  string // Script.Start
	pages  bool   // serve testdata/pages (the section-5 script's) too
	// during drives the run while it runs (Script.During).
	during func(t *testing.T, ctx context.Context, run *hosttest.Live)
	state  history.State // how the run ends; "" means succeeded
	check  func(t *testing.T, res *hosttest.Result, dir string)
}

// realGuideRuns: the fake's tabs [{ url, title }] are Start and the page's
// <title>, its evaluate, read and titles options the pages' content, its
// failures what the page itself does (a Zip field of maxlength 5), and its
// onAction navigations the pages' own links and forms. The pane watcher's
// button is clicked and its run stopped through Script.During; it ends
// cancelled, where the fake's host.run() resolves with no exit code.
var realGuideRuns = []realGuideRun{
	{
		marker: `// @permissions browser page-js write=page-info.txt`,
		start:  "https://example.com/",
		check: func(t *testing.T, res *hosttest.Result, dir string) {
			assert.JSONEq(t, `{"links":3}`, string(res.Entry.Result))
			data, err := os.ReadFile(filepath.Join(dir, "page-info.txt"))
			require.NoError(t, err)
			assert.Equal(t, "Example: 3 links\n", string(data), "page-info.txt")
			opened := res.UI.Opened()
			require.Len(t, opened, 1, "ui.open")
			assert.Equal(t, filepath.Join(dir, "page-info.txt"), opened[0].Path)
			assert.Equal(t, "down", opened[0].Split)
		},
	},
	{
		marker: "  await tab.goto(`https://example.com/page/${n}`);",
		start:  "https://example.com/",
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			assert.JSONEq(t, `["One","Two","Three"]`, string(res.Entry.Result))
		},
	},
	{
		marker: "if (status !== 200) throw new Error(`the cart answered ${status}`);",
		start:  "https://example.com/",
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			assert.JSONEq(t, `{"total":"12.00","items":2}`, string(res.Entry.Result))
			assert.Equal(t, "https://shop.example/cart", lastAddress(t, res), "the tab's address")
		},
	},
	{
		marker: `const urls = ["https://example.com/a", "https://example.com/b", "https://example.com/c"];`,
		start:  "https://example.com/",
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			assert.JSONEq(t, `[
				{"url": "https://example.com/a", "title": "A"},
				{"url": "https://example.com/b", "title": "B"},
				{"url": "https://example.com/c", "title": "C"}]`, string(res.Entry.Result))
			assert.Equal(t, 3, countCalls(t, res, "tabs.open"), "tabs opened")
			assert.Equal(t, 3, countCalls(t, res, "tab.close"), "tabs closed: none left open")
		},
	},
	{
		marker: `import { NotCommittedError, tabs } from "tranquil/automation";`,
		start:  "https://shop.example/checkout",
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			var fills []string
			for _, a := range res.Entry.Actions {
				if a.Method == "fill" {
					fills = append(fills, a.Outcome)
				}
			}
			assert.Equal(t, []string{"ok", "not_committed"}, fills, "the fills")
			assert.Contains(t, res.Entry.Output, "the field kept only 12345")
			assert.Equal(t, "https://shop.example/pay", lastAddress(t, res), "the tab's address")
		},
	},
	{
		// The watcher runs until it is stopped: the test clicks its button
		// once it is there, then stops the run, as the fake's run does.
		marker: `await paneControls.register("Page title", async () => (await tabs.active()).title());`,
		start:  "https://example.com/",
		during: func(t *testing.T, ctx context.Context, run *hosttest.Live) {
			for end := time.Now().Add(20 * time.Second); !slices.Contains(run.Controls(), "Page title"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(end) {
					t.Error("the watcher registered no \"Page title\" button")
					return
				}
			}
			got, err := run.Click(ctx, "Page title")
			assert.NoError(t, err)
			assert.Equal(t, "Example", got, "the button's answer")
			run.Cancel("the test is done")
		},
		state: history.StateCancelled, // not succeeded: the watcher waited to be stopped
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			assert.Contains(t, res.Entry.Reason, "the test is done")
		},
	},
	{
		marker: `// pick.ts`,
		pages:  true,
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			assert.JSONEq(t, `"Coffee"`, string(res.Entry.Result))
		},
	},
	{
		marker: `// my_script.ts`,
		start:  "https://shop.example/cart",
		check: func(t *testing.T, res *hosttest.Result, _ string) {
			var got []string
			for _, a := range res.Entry.Actions {
				got = append(got, a.Method+" "+a.Outcome)
			}
			assert.Equal(t, []string{"fill ok"}, got, "the actions")
		},
	},
}

// guideSites are the named sites the guide's scripts go to.
func guideSites() map[string]fs.FS {
	return map[string]fs.FS{
		"example.com":  os.DirFS("testdata/sites/example.com"),
		"shop.example": os.DirFS("testdata/sites/shop.example"),
	}
}

// countCalls counts the trace's calls of method that succeeded.
func countCalls(t *testing.T, res *hosttest.Result, method string) int {
	t.Helper()
	require.NotNil(t, res.Trace)
	n := 0
	for _, c := range res.Trace.Calls {
		if c.Method == method && c.OK() {
			n++
		}
	}
	return n
}

// lastAddress is where the run's first tab (the one its first tab call
// used) went last, from the trace.
func lastAddress(t *testing.T, res *hosttest.Result) string {
	t.Helper()
	require.NotNil(t, res.Trace)
	tab := ""
	for _, c := range res.Trace.Calls {
		if c.Tab != "" {
			tab = c.Tab
			break
		}
	}
	last := ""
	for _, n := range res.Trace.Navigations {
		if n.Tab == tab && n.Kind != "refused" {
			last = n.URL
		}
	}
	return last
}

// TestGuideScriptsOnTheRealHost runs every script of the guide on the
// real host (run manager, deno, headless Chromium) as runner's
// TestGuideSnippets runs them on the fake one, on pages served on
// loopback under the names the scripts use, and checks what the fake's
// run checks. The two must agree on every script.
func TestGuideScriptsOnTheRealHost(t *testing.T) {
	testenv.CheckGoroutines(t)
	scripts := guideScripts(t)
	require.NotEmpty(t, scripts, "the guide shows no script")
	used := map[int]bool{}
	for _, s := range scripts {
		var found []int
		for i, r := range realGuideRuns {
			if slices.Contains(strings.Split(s.Src, "\n"), r.marker) {
				found = append(found, i)
			}
		}
		require.Len(t, found, 1, "the script at line %d of the guide (%s) needs exactly one entry in realGuideRuns", s.Line, s.File)
		used[found[0]] = true
		r := realGuideRuns[found[0]]
		t.Run(fmt.Sprintf("L%d %s", s.Line, s.File), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, s.File)
			require.NoError(t, os.WriteFile(path, []byte(s.Src), 0o600))
			script := hosttest.Script{Path: path, Sites: guideSites(), Start: r.start, Approve: true}
			if r.pages {
				script.Pages = os.DirFS("testdata/pages")
			}
			if r.during != nil {
				script.During = func(ctx context.Context, run *hosttest.Live) { r.during(t, ctx, run) }
			}
			res := hosttest.Run(t, realScript(t, script))
			want := r.state
			if want == "" {
				want = history.StateSucceeded
			}
			require.Equal(t, want, res.Entry.State, "the run")
			r.check(t, res, dir)
			if testing.Verbose() {
				t.Log(res.Explain())
			}
		})
	}
	for i, r := range realGuideRuns {
		assert.True(t, used[i], "realGuideRuns entry %q names no script of the guide", r.marker)
	}
}
