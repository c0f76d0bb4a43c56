package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/testenv"
)

// guideBlock is one ```ts block of the guide, as the test writes it.
type guideBlock struct {
	testenv.GuideBlock
	preamble int // lines the fragment rule put before it
}

// guideBlocks extracts every ```ts block of the guide (testenv.GuideBlocks).
func guideBlocks(t *testing.T) []guideBlock {
	t.Helper()
	guide, err := sdkFS.ReadFile("sdk/writing-automations.md")
	require.NoError(t, err)
	found, err := testenv.GuideBlocks(string(guide))
	require.NoError(t, err)
	blocks := make([]guideBlock, len(found))
	for i, b := range found {
		blocks[i].GuideBlock = b
	}
	return blocks
}

// sdkExports lists the names mod.ts exports, values and types apart.
func sdkExports(t *testing.T) (values, types []string) {
	t.Helper()
	mod, err := sdkFS.ReadFile("sdk/mod.ts")
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`(?s)\nexport (type )?\{([^}]*)\}`).FindAllStringSubmatch(string(mod), -1) {
		for _, n := range strings.Split(m[2], ",") {
			if f := strings.Fields(n); len(f) > 0 {
				if m[1] != "" {
					types = append(types, f[len(f)-1])
				} else {
					values = append(values, f[len(f)-1])
				}
			}
		}
	}
	for _, m := range regexp.MustCompile(`\nexport (?:const|let|class|(?:async )?function) (\w+)`).FindAllStringSubmatch(string(mod), -1) {
		values = append(values, m[1])
	}
	for _, m := range regexp.MustCompile(`\nexport (?:type|interface) (\w+)`).FindAllStringSubmatch(string(mod), -1) {
		types = append(types, m[1])
	}
	require.Contains(t, values, "tabs")
	return values, types
}

// fragmentPreamble is the rule that makes a fragment of the guide (a
// block with no import of its own, such as `await tab.click(…)`) a module
// deno can check: it imports from "tranquil/automation" every name the SDK
// exports that the fragment mentions and does not declare, and, when it
// uses `tab` without declaring it, declares the active tab as a script
// would (`const tab = await tabs.active();`). No block is edited by hand.
func fragmentPreamble(src string, values, types []string) string {
	mentions := func(n string) bool {
		return regexp.MustCompile(`\b`+regexp.QuoteMeta(n)+`\b`).MatchString(src) &&
			!regexp.MustCompile(`\b(?:const|let|var|using|function|class|type|interface) `+regexp.QuoteMeta(n)+`\b`).MatchString(src)
	}
	tab := mentions("tab")
	var vs, ts []string
	for _, n := range values {
		if mentions(n) || (tab && n == "tabs") {
			vs = append(vs, n)
		}
	}
	for _, n := range types {
		if mentions(n) {
			ts = append(ts, n)
		}
	}
	var b strings.Builder
	if len(vs) > 0 {
		fmt.Fprintf(&b, "import { %s } from \"tranquil/automation\";\n", strings.Join(vs, ", "))
	}
	if len(ts) > 0 {
		fmt.Fprintf(&b, "import type { %s } from \"tranquil/automation\";\n", strings.Join(ts, ", "))
	}
	if tab {
		b.WriteString("const tab = await tabs.active();\n")
	}
	return b.String()
}

// guideRun is how TestGuideSnippets runs one of the guide's scripts under
// the testing kit's fake host: the fake tabs and page answers it needs,
// and what it must have done. Each script of the guide has exactly one,
// found by a line only that script holds.
type guideRun struct {
	marker  string // a line of the script
	options string // TypeScript: more installFakeHost options
	body    string // TypeScript: runs the script (default: host.run(), which must end cleanly)
	check   string // TypeScript: what the run must have done
	fails   string // a run expected to fail: what its error says
	only    string // why the script is type-checked only, never run
}

// guideRuns is the table of the guide's scripts. The pane-control watcher
// waits for context.signal, so its run is cancelled through the kit, as
// the Stop button would, after a click on its button. No script is
// type-checked only, and none is expected to fail.
var guideRuns = []guideRun{
	{
		marker:  `// @permissions browser page-js write=page-info.txt`,
		options: `tabs: [{ url: "https://example.com/", title: "Example" }], evaluate: () => 3`,
		check: `same(host.result, { links: 3 }, "the result");
  same(Deno.readTextFileSync(new URL("./page-info.txt", import.meta.url)), "Example: 3 links\n", "page-info.txt");
  same(host.opened.map((o) => [o.path.endsWith("page-info.txt"), o.split]), [[true, "down"]], "ui.open");`,
	},
	{
		marker: "  await tab.goto(`https://example.com/page/${n}`);",
		options: `tabs: [{ url: "https://example.com/" }],
    titles: { "https://example.com/page/1": "One", "https://example.com/page/2": "Two", "https://example.com/page/3": "Three" }`,
		check: `same(host.result, ["One", "Two", "Three"], "the result");`,
	},
	{
		marker: "if (status !== 200) throw new Error(`the cart answered ${status}`);",
		options: `tabs: [{ url: "https://example.com/" }],
    read: (_tab, reader) => ({ text: "12.00", count: 2 } as Record<string, unknown>)[reader]`,
		check: `same(host.result, { total: "12.00", items: 2 }, "the result");
  same(host.browser.tab("tab-1")?.url, "https://shop.example/cart", "the tab's address");`,
	},
	{
		marker: `const urls = ["https://example.com/a", "https://example.com/b", "https://example.com/c"];`,
		options: `tabs: [{ url: "https://example.com/" }],
    titles: { "https://example.com/a": "A", "https://example.com/b": "B", "https://example.com/c": "C" }`,
		check: `same(host.result, [
    { url: "https://example.com/a", title: "A" },
    { url: "https://example.com/b", title: "B" },
    { url: "https://example.com/c", title: "C" },
  ], "the result");
  same(host.browser.tabs.filter((t) => t.openedByScript && !t.closed).length, 0, "tabs left open");`,
	},
	{
		marker: `import { NotCommittedError, tabs } from "tranquil/automation";`,
		options: `tabs: [{ url: "https://shop.example/checkout" }],
    failures: [{ method: "fill", target: { label: "Zip" }, error: { code: "not_committed", kept: "12345" } }],
    onAction: (a, tab) => {
      if (a.method === "click") host.browser.navigate(tab.id, "https://shop.example/pay");
    }`,
		check: `same(host.browser.actions.filter((a) => a.method === "fill").map((a) => a.outcome), ["ok", "not_committed"], "the fills");
  same(host.browser.tab("tab-1")?.url, "https://shop.example/pay", "the tab's address");`,
	},
	{
		marker:  `await paneControls.register("Page title", async () => (await tabs.active()).title());`,
		options: `tabs: [{ url: "https://example.com/", title: "Example" }]`,
		body: `const run = host.run();
  let settled = false;
  run.then(() => settled = true, () => settled = true);
  for (const end = Date.now() + 5000; !host.controls.has("Page title") && !settled && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 10));
  }
  same(await host.click("Page title"), "Example", "the button's answer");
  await new Promise((r) => setTimeout(r, 50));
  if (settled) throw new Error(` + "`the watcher ended before it was cancelled: ${JSON.stringify(await run)}`" + `);
  host.cancel("the test is done");
  same(await run, undefined, "the run's exit");`,
	},
	{
		marker: `// pick.ts`,
		options: `tabs: [{ url: "http://127.0.0.1:8000/" }],
    onAction: (a, tab) => {
      if (a.method === "click") host.browser.navigate(tab.id, "http://127.0.0.1:8000/item.html?name=Coffee");
    },
    read: () => "Coffee"`,
		check: `same(host.result, "Coffee", "the result");`,
	},
	{
		marker:  `// my_script.ts`,
		options: `tabs: [{ url: "https://shop.example/cart", title: "Cart" }]`,
		check:   `same(host.browser.actions.map((a) => [a.method, a.outcome]), [["fill", "ok"]], "the actions");`,
	},
}

// guideRunsTest is the deno test file that runs the guide's scripts, one
// Deno.test each, named after the block's line in the guide.
func guideRunsTest(runs map[*guideBlock]guideRun) string {
	var b strings.Builder
	b.WriteString(`import { type FakeHost, installFakeHost } from "tranquil/automation/testing";

function same(got: unknown, want: unknown, what: string): void {
  const [g, w] = [JSON.stringify(got), JSON.stringify(want)];
  if (g !== w) throw new Error(` + "`${what}: got ${g}, want ${w}`" + `);
}
`)
	blocks := make([]*guideBlock, 0, len(runs))
	for blk := range runs {
		blocks = append(blocks, blk)
	}
	slices.SortFunc(blocks, func(a, b *guideBlock) int { return a.Line - b.Line })
	for _, blk := range blocks {
		r := runs[blk]
		body := r.body
		switch {
		case r.fails != "":
			body = `const err = await host.run().then(() => undefined, (e) => e);
  if (!String(err).includes(` + strconv.Quote(r.fails) + `)) throw new Error(` + "`the run should fail with " + r.fails + ", got ${err}`" + `);`
		case body == "":
			body = `same(await host.run(), undefined, "the run's exit (undefined: it ran to its end)");`
		}
		fmt.Fprintf(&b, `
Deno.test("the guide's block at line %d (%s)", async () => {
  using host: FakeHost = installFakeHost({
    script: import.meta.resolve("./%s"),
    %s,
  });
  %s
  %s
});
`, blk.Line, blk.File, blk.File, r.options, body, r.check)
	}
	return b.String()
}

// TestGuideSnippets holds every ```ts block of the SDK's guide to the SDK:
// each is type-checked with deno check against the config runs use
// (fragments made modules by fragmentPreamble), and each whole script runs
// under the testing kit's fake host, by guideRuns, with no network at all
// (deno gets no --allow-net). The guide's _test.ts block is checked here
// and run as printed by TestGuideTestCommandRunsAsPrinted.
func TestGuideSnippets(t *testing.T) {
	t.Parallel() // see parallel_test.go
	deno := testenv.Deno(t)
	blocks := guideBlocks(t)
	require.NotEmpty(t, blocks, "the guide has no ```ts block: nothing would be checked")
	values, types := sdkExports(t)

	sdk, err := MaterializeSDK(t.TempDir())
	require.NoError(t, err)
	dir := t.TempDir()
	byFile := map[string]*guideBlock{}
	runs := map[*guideBlock]guideRun{}
	used := map[int]bool{}
	for i := range blocks {
		b := &blocks[i]
		require.NotContains(t, byFile, b.File, "two blocks of the guide are written as %s", b.File)
		byFile[b.File] = b
		src := b.Src
		if !regexp.MustCompile(`(?m)^import `).MatchString(src) {
			pre := fragmentPreamble(src, values, types)
			b.preamble = strings.Count(pre, "\n")
			src = pre + src
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, b.File), []byte(src), 0o600))
		if !b.Script {
			continue
		}
		var found []int
		for j, r := range guideRuns {
			if slices.Contains(strings.Split(b.Src, "\n"), r.marker) {
				found = append(found, j)
			}
		}
		require.Len(t, found, 1, "the script at line %d of the guide (%s) needs exactly one entry in guideRuns", b.Line, b.File)
		used[found[0]] = true
		if r := guideRuns[found[0]]; r.only == "" {
			runs[b] = r
		} else {
			t.Logf("the script at line %d of the guide is type-checked only: %s", b.Line, r.only)
		}
	}
	for j, r := range guideRuns {
		assert.True(t, used[j], "guideRuns entry %q names no script of the guide", r.marker)
	}

	// guideLines points deno's file:line:col at the guide's own lines.
	fileLine := regexp.MustCompile(`([\w.]+\.ts):(\d+):(\d+)`)
	guideLines := func(out []byte) string {
		return fileLine.ReplaceAllStringFunc(string(out), func(s string) string {
			m := fileLine.FindStringSubmatch(s)
			b := byFile[m[1]]
			if b == nil {
				return s
			}
			n, _ := strconv.Atoi(m[2])
			return fmt.Sprintf("%s (writing-automations.md:%d:%s)", s, b.Line+n-b.preamble, m[3])
		})
	}
	deno1 := func(t *testing.T, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, deno, args...)
		cmd.Dir = dir
		cmd.Env = sdkEnv(t, deno, "HOME="+os.Getenv("HOME"), "TMPDIR="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "deno %s, in the guide's blocks:\n%s", args[0], guideLines(out))
		if args[0] == "test" {
			assert.Regexp(t, fmt.Sprintf(`ok \| %d passed \| 0 failed`, len(runs)), string(out))
		}
	}

	t.Run("check", func(t *testing.T) {
		args := []string{"check", "--config=" + sdk.Config, "--no-lock", "--cached-only"}
		for _, b := range blocks {
			args = append(args, b.File)
		}
		deno1(t, args...)
	})
	t.Run("run", func(t *testing.T) {
		require.NotEmpty(t, runs, "the guide shows no script to run")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "guide_runs_test.ts"), []byte(guideRunsTest(runs)), 0o600))
		deno1(t, "test", "--config="+sdk.Config, "--no-lock", "--cached-only", "--no-prompt",
			"--allow-read="+dir+","+sdk.Dir, "--allow-write="+dir, "guide_runs_test.ts")
	})
	t.Logf("checked %d ```ts blocks of the guide; ran %d of them as scripts", len(blocks), len(runs))
}

// UncaughtErrorFormat is how a run prints the error that ended it (the
// bootstrap's report), as the runner's history keeps it: the first error
// line, then the first frame. The guide's example and real runs
// (TestBrowserErrorsNameTheScriptLine) are both held to it.
var UncaughtErrorFormat = regexp.MustCompile(`^error: ([A-Z]\w*) \(([a-z_]+)\): ((?:tab|tabs|context|ui|files|clipboard|config|paneControls|step|workspace)\.\w+): (.+) at file:///\S+\.ts:\d+:\d+$`)

// TestGuideErrorExample holds the guide's printed uncaught error to what
// the runner makes of a real one: a script run through the real bootstrap
// (main.ts's report) whose fill the host refuses with site_not_allowed,
// and the guide's lines, scanned as the runner scans a run's stderr, give
// a first error of the same format; and the guide's message is word for
// word the one scriptMessage gives for the same site error.
func TestGuideErrorExample(t *testing.T) {
	r := newSDKRig(t)
	run := r.start(t, "run-guide-error", `// @permissions browser forms
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.fill({ label: "Elsewhere" }, "x");
`)
	require.Equal(t, 1, run.wait(t, time.Minute), "stderr: %s", run.stderr.String())
	var real firstError
	for _, l := range strings.Split(run.stderr.String(), "\n") {
		real.see(l)
	}
	got := UncaughtErrorFormat.FindStringSubmatch(real.String())
	require.NotNil(t, got, "a real run's error does not have the format the guide is held to:\n%s", run.stderr.String())
	assert.Equal(t, []string{"TabError", "site_not_allowed", "tab.fill"}, got[1:4])
	assert.Regexp(t, ` at file:///\S*script\.ts:4:\d+$`, real.String(), "the frame is the script's line")

	sec := guideSection(t, "## 4. Errors")
	blocks := regexp.MustCompile("(?s)\n```\n(error: .*?)\n```").FindAllStringSubmatch(sec, -1)
	require.NotEmpty(t, blocks, "the Errors section shows a printed error, a browser call's first")
	var f firstError
	for _, l := range strings.Split(blocks[0][1], "\n") {
		f.see(l)
	}
	m := UncaughtErrorFormat.FindStringSubmatch(f.String())
	require.NotNil(t, m, "the guide's error is not printed as runs print one:\n%s", f.String())
	assert.Equal(t, "TabError", m[1])
	assert.Equal(t, string(errcode.SiteNotAllowed), m[2])

	w := regexp.MustCompile(`^(\w+) refused on (\S+), which is not on this script's sites= \(([^)]*)\)`).FindStringSubmatch(m[4])
	require.NotNil(t, w, "the guide's example is not a sites= refusal: %s", m[4])
	want := scriptMessage(&cdp.SiteError{Method: w[1], Site: w[2], Sites: strings.Split(w[3], ", ")}, errcode.SiteNotAllowed)
	assert.Equal(t, "tab."+w[1], m[3])
	// The guide's checkout.ts line 12 is, as its later example has it, an
	// `await tab.fill(…)` at the start of a line, as the real script's line
	// 4 is: the frames point at the same column (the method's name).
	col := regexp.MustCompile(`:(\d+)$`)
	assert.Equal(t, col.FindString(real.String()), col.FindString(f.String()), "the guide's frame column")
	assert.Equal(t, want, m[4], "the guide's message is not the one a run prints")
}
