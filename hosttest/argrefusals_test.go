package hosttest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// refusalCall is one bad call of refusalScript: its name there and the
// code its refusal must carry ("" for a call both hosts must take).
type refusalCall struct {
	name, code string
	call       string // the script's expression, with tab, url and t (a good target) in scope
}

// refusalCalls is the corpus: a script's argument mistakes the host
// refuses (runner's strict decoding, argError, checkTimeout, the facades'
// checks, cdp's Locator.Check), which the testing kit's fake host
// (served.ts) states again in TypeScript.
var refusalCalls = []refusalCall{
	{"unknown option key", "invalid", `tab.click(t, { bogus: 1 })`},
	{"misspelt option key", "invalid", `tab.click(t, { timout: 100 })`},
	{"misspelt target key", "invalid", `tab.click({ selecter: "h1" })`},
	{"nested wrong type", "invalid", `tab.click(t, { position: { x: "1", y: 2 } })`},
	{"list where a word goes", "invalid", `tab.click(t, { modifiers: "Shift" })`},
	{"fraction where a whole number goes", "invalid", `tab.click({ selector: "h1", nth: 1.5 })`},
	{"function in the options", "not_serializable", `tab.click(t, { timeout: () => 1 })`},
	{"function as fill's value", "not_serializable", `tab.fill(t, () => "x")`},
	{"target naming two ways", "invalid", `tab.click({ selector: "h1", text: "Args" })`},
	{"target naming nothing", "invalid", `tab.click({ nth: 1 })`},
	{"exact without role or label", "invalid", `tab.click({ text: "Args", exact: true })`},
	{"target nested too deep", "invalid", `tab.click({ selector: "a", within: { selector: "b", within: { selector: "c", within: { selector: "d", within: { selector: "e" } } } } })`},
	{"frame inside within", "invalid", `tab.click({ selector: "a", within: { selector: "b", frame: "iframe" } })`},
	{"bad part inside has", "invalid", `tab.click({ selector: "a", has: { selector: "b", text: "c" } })`},
	{"negative timeout", "invalid", `tab.click(t, { timeout: -1 })`},
	{"infinite timeout", "invalid", `tab.goto(url, { timeout: Infinity })`},
	{"timeout 0 is the default", "", `tab.goto(url, { timeout: 0 })`},
	{"bad waitUntil", "invalid", `tab.goto(url, { waitUntil: "networkidle" })`},
	{"bad waitFor state", "invalid", `tab.waitFor(t, { state: "gone" })`},
	{"unknown modifier", "invalid", `tab.click(t, { modifiers: ["Hyper"] })`},
	{"infinite position", "invalid", `tab.click(t, { position: { x: Infinity, y: 0 } })`},
	{"type delay too long", "invalid", `tab.type(t, "x", { delay: 20000 })`},
	{"unknown dialog answer", "invalid", `tab.onDialog("maybe")`},
	{"misspelt dialog answer key", "invalid", `tab.onDialog({ confirm: { accpt: true } })`},
	{"dialog answer by an unknown type", "invalid", `tab.onDialog({ confrim: "accept" })`},
	{"dialog answer without accept", "invalid", `tab.onDialog({ prompt: { promptText: "x" } })`},
	{"fill's value a number", "invalid", `tab.fill(t, 5)`},
	{"select's option a number", "invalid", `tab.select(t, [1])`},
	{"negative expected count", "invalid", `tab.expect(t).toHaveCount(-1)`},
	{"fractional expected count", "invalid", `tab.expect(t).toHaveCount(1.5)`},
	{"bad expectation timeout", "invalid", `tab.expect(t).toHaveCount(1, { timeout: -5 })`},
	{"empty attribute name", "invalid", `tab.expect(t).toHaveAttribute("")`},
	{"attribute name too long", "invalid", `tab.expect(t).toHaveAttribute("é".repeat(513))`},
	{"longest attribute name", "", `tab.expect(t).not.toHaveAttribute("a".repeat(1024), undefined, { timeout: 1000 })`},
	{"NaN timeout", "invalid", `tab.click(t, { timeout: NaN })`},
	{"reader's negative timeout", "invalid", `tab.text(t, { timeout: -1 })`},
	{"waitForURL's negative timeout", "invalid", `tab.waitForURL("x", { timeout: -2 })`},
	{"string target where an object goes", "invalid", `tab.click("h1")`},
	{"waitFor by selector, bad state", "invalid", `tab.waitFor("h1", { state: "gone" })`},
	{"waitUntil a number", "invalid", `tab.goto(url, { waitUntil: 5 })`},
	{"unknown button", "invalid", `tab.click(t, { button: "back" })`},
	{"clickCount over 3", "invalid", `tab.click(t, { clickCount: 4 })`},
	{"dblclick with a clickCount", "invalid", `tab.dblclick(t, { clickCount: 2 })`},
	{"hover's unknown modifier", "invalid", `tab.hover(t, { modifiers: ["Hyper"] })`},
	{"negative type delay", "invalid", `tab.type(t, "x", { delay: -1 })`},
	{"press's target naming two ways", "invalid", `tab.press("Enter", { target: { selector: "a", text: "b" } })`},
	{"dragTo's second target naming two ways", "invalid", `tab.dragTo(t, { selector: "a", text: "b" })`},
	{"check's state a word", "invalid", `tab.check(t, "yes")`},
	{"setFiles' path a number", "invalid", `tab.setFiles(t, [5])`},
	{"attribute's name a number", "invalid", `tab.attribute(t, 5)`},
	{"misspelt screenshot option", "invalid", `tab.screenshot({ fullpage: true })`},
	{"dialog answer a number", "invalid", `tab.onDialog(5)`},
	{"download saved nowhere", "invalid", `tab.waitForDownload(() => 1, { path: "" })`},
	{"misspelt tabs.open option", "invalid", `anyTabs.open(url, { backgrond: true })`},
	{"tabs.open's negative timeout", "invalid", `anyTabs.open(url, { timeout: -1 })`},
}

// refusalScript makes refusalCalls' calls, each in a try/catch, and
// prints one JSON line per call (its error's name, code, message and
// own fields; ok for a call that was taken); its result is those lines.
func refusalScript() string {
	var b strings.Builder
	b.WriteString(`// @permissions browser forms
import { context, tabs } from "tranquil/automation";

// Untyped, as a script in JavaScript (or with a cast) calls it: the corpus is of values the types refuse.
// deno-lint-ignore no-explicit-any
const tab: any = await tabs.active();
// deno-lint-ignore no-explicit-any
const anyTabs: any = tabs;
const url = await tab.url();
const t = { selector: "h1" };
const lines: Record<string, unknown>[] = [];
async function attempt(call: string, f: () => Promise<unknown>): Promise<void> {
  let line: Record<string, unknown> = { call, ok: true };
  try {
    await f();
  } catch (e) {
    const err = e as Error & Record<string, unknown>;
    line = { call, name: err.name, code: err.code, message: err.message };
    for (const k of Object.keys(err)) if (k !== "stack" && !(k in line)) line[k] = err[k];
    if (line.tab === tab.id) line.tab = "the tab"; // the real tab's ID is the browser's, the kit's its own
  }
  console.log(JSON.stringify(line));
  lines.push(line);
}
`)
	for _, c := range refusalCalls {
		b.WriteString("await attempt(" + jsString(c.name) + ", () => " + c.call + ");\n")
	}
	b.WriteString("await context.result(lines);\n")
	return b.String()
}

// scriptFrame is the script's line a message ends with: the real run's
// file, or the kit's run of it (with its query).
var scriptFrame = regexp.MustCompile(`\(at file:///\S*/script\.ts(?:\?fake-run=\d+)?(:\d+:\d+)\)$`)

// normalize makes the lines' messages name the script's line the same
// way, whichever folder it ran in; the line and column stay.
func normalize(lines []map[string]any) {
	for _, l := range lines {
		if m, ok := l["message"].(string); ok {
			l["message"] = scriptFrame.ReplaceAllString(m, "(at script.ts$1)")
		}
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// refusalPage is the page the real run's tab shows; none of the calls
// but the accepted ones reach it.
var refusalPage = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Args</title><h1>Args</h1>\n")}}

// refusalKitTest runs script.ts under the testing kit's fake host, as an
// author's deno test would, and writes its result to kit.json.
const refusalKitTest = `import { installFakeHost } from "tranquil/automation/testing";

Deno.test("the refusals", async () => {
  using host = installFakeHost({
    script: import.meta.resolve("./script.ts"),
    tabs: [{ url: "http://127.0.0.1/", title: "Args" }],
    read: () => null, // the page's h1 has no attributes
  });
  await host.run();
  await Deno.writeTextFile(new URL("./kit.json", import.meta.url), JSON.stringify(host.result));
});
`

// TestArgumentRefusalsOfTheKitAreTheHosts holds the testing kit's fake
// host to the real one on a script's argument mistakes: one script
// (refusalScript) runs on the real host (run manager, deno, headless
// Chromium, a page served on loopback) and under the kit's fake host, and
// each bad call must be refused by both with the same error: its name,
// code, message and fields (argument, path, key, takes, closest, want,
// got), and each good one taken by both. The host is the statement of the
// rules; served.ts's checkArgs, checkValues and targetWrong restate them.
func TestArgumentRefusalsOfTheKitAreTheHosts(t *testing.T) {
	testenv.CheckGoroutines(t)
	deno := testenv.Deno(t)
	src := refusalScript()

	res := hosttest.Run(t, realScript(t, hosttest.Script{Source: src, Pages: refusalPage, Approve: true}))
	require.Equal(t, history.StateSucceeded, res.Entry.State, res.Explain())
	var real []map[string]any
	require.NoError(t, json.Unmarshal(res.Entry.Result, &real), "the real run's result: %s", res.Entry.Result)

	tmp := t.TempDir()
	sdk, err := runner.MaterializeSDK(filepath.Join(tmp, "sdk"))
	require.NoError(t, err)
	dir := filepath.Join(tmp, "script")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script.ts"), []byte(src), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "refusals_test.ts"), []byte(refusalKitTest), 0o600))
	env := []string{"NO_COLOR=1", "DENO_NO_UPDATE_CHECK=1", "DENO_DIR=" + testenv.DenoCacheDir(t)}
	out, err := denoTest(t, deno, dir, env, []string{"test", "--config=" + sdk.Config, "--no-lock", "--cached-only",
		"--allow-read=" + dir + "," + sdk.Dir, "--allow-write=" + dir, "refusals_test.ts"})
	require.NoError(t, err, "the kit's run:\n%s", out)
	data, err := os.ReadFile(filepath.Join(dir, "kit.json"))
	require.NoError(t, err)
	var kit []map[string]any
	require.NoError(t, json.Unmarshal(data, &kit), "the kit's result: %s", data)

	normalize(real)
	normalize(kit)
	require.Len(t, real, len(refusalCalls), "the real run's lines")
	require.Len(t, kit, len(refusalCalls), "the kit's lines")
	for i, c := range refusalCalls {
		require.Equal(t, c.name, real[i]["call"], "the real run's line %d", i)
		if c.code == "" {
			assert.Equal(t, true, real[i]["ok"], "%s: the host takes it: %v", c.name, real[i])
		} else {
			assert.Equal(t, c.code, real[i]["code"], "%s: the host's refusal: %v", c.name, real[i])
		}
		assert.Equal(t, real[i], kit[i], "%s (%s): the kit's line is not the host's", c.name, c.call)
	}
	if testing.Verbose() {
		for _, l := range real {
			t.Logf("%v", l)
		}
	}
}
