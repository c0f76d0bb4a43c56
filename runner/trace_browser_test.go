package runner_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
	"github.com/tranquil/automation/trace"
)

// traceSite serves a sign-up page that logs to the console.
func traceSite(t testing.TB) *httptest.Server {
	t.Helper()
	srv := testenv.HTMLSite(`<title>Sign up</title><h1>Sign up</h1>
<label for=w>Secret word</label><input id=w>
<button>Send</button>
<script>console.log("trace page ready", 42)</script>`)
	t.Cleanup(srv.Close)
	return srv
}

// A real script fills a field, reads it and fails a click; its trace holds
// the calls with their outcomes, the navigation, the page's console line,
// the script's steps and progress, the failure's screenshot and outline,
// and never the value typed nor the page's query.
func TestBrowserTrace(t *testing.T) {
	const value, query = "VALUE-zq81x-quokka", "QUERY-secret-7731"
	e := newBrowserEnvWith(t, envOptions{site: traceSite(t)})
	entry := e.run(t, "traced.ts", fmt.Sprintf(`// @permissions browser forms sites=127.0.0.1
import { context, step, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("%s/signup?token=%s");
await step.do("fill the form", async () => { await tab.fill({ label: "Secret word" }, "%s"); });
context.progress("half way", 0.5);
const read = await tab.value({ label: "Secret word" });
let code = "none";
try { await tab.click({ role: "button", name: "Missing" }, { timeout: 300 }); }
catch (e) { code = (e as { code: string }).code; }
await context.result({ read, code });
`, e.site.URL, query, value))
	var res struct{ Read, Code string }
	result(t, entry, &res)
	require.Equal(t, value, res.Read)
	require.NotEqual(t, "none", res.Code)

	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	require.Equal(t, entry.ID, tr.RunID)
	page := e.site.URL + "/signup"
	byMethod := map[string]trace.Call{}
	for _, c := range tr.Calls {
		byMethod[c.Method] = c
		if strings.HasPrefix(c.Method, "tab.") {
			assert.Equal(t, page, c.Page, c.Method)
			assert.NotEmpty(t, c.Tab, c.Method)
		}
	}
	require.Contains(t, byMethod, "tab.goto")
	require.Contains(t, byMethod, "tab.fill")
	require.Contains(t, byMethod, "tab.value")
	require.Contains(t, byMethod, "tab.click")
	assert.True(t, byMethod["tab.fill"].OK())
	assert.Equal(t, `label "Secret word"`, byMethod["tab.fill"].Target)
	assert.True(t, byMethod["tab.value"].OK())
	click := byMethod["tab.click"]
	assert.Equal(t, res.Code, click.Code, "the code the script got")
	assert.Contains(t, click.Target, "Missing")
	assert.NotEmpty(t, click.Error)
	assert.GreaterOrEqual(t, click.Duration, 250*time.Millisecond, "the click waited for its target")

	var gotos []trace.Navigation
	for _, n := range tr.Navigations {
		if n.Kind == "goto" {
			gotos = append(gotos, n)
		}
	}
	require.Len(t, gotos, 1)
	assert.Contains(t, gotos[0].URL, "/signup")

	var logged bool
	for _, l := range tr.Console {
		logged = logged || (l.Level == "log" && l.Text == "trace page ready 42")
	}
	assert.True(t, logged, "console: %+v", tr.Console)

	var steps []string
	for _, s := range tr.Steps {
		steps = append(steps, fmt.Sprintf("%s %s %s %v %.1f", s.Kind, s.Name, s.Phase, s.OK, s.Fraction))
	}
	assert.Equal(t, []string{"do fill the form start false -1.0", "do fill the form end true -1.0", "progress half way  false 0.5"}, steps)

	require.Len(t, tr.Failures, 1)
	f := tr.Failures[0]
	assert.Equal(t, click.Seq, f.Seq)
	assert.Equal(t, trace.JPEG, f.ImageType)
	assert.True(t, strings.HasPrefix(string(f.Image), "\xff\xd8\xff"))
	assert.Contains(t, f.Outline, `button "Send"`)
	assert.Contains(t, f.Outline, `textbox "Secret word"`)
	assert.Empty(t, f.Note)

	// Neither the value nor the query is anywhere: not in the file, not
	// in the trace it decodes to.
	raw, err := e.m.History().Trace(entry.ID)
	require.NoError(t, err)
	js, err := json.Marshal(tr)
	require.NoError(t, err)
	for _, secret := range []string{value, query} {
		assert.NotContains(t, string(raw), secret)
		assert.NotContains(t, string(js), secret)
	}
	t.Logf("trace: %d calls, %d bytes stored", len(tr.Calls), len(raw))
}

// explainRun prints each call of run id that failed, the page it failed
// on, and whether the trace kept a screenshot of that page.
func explainRun(w io.Writer, m *runner.Manager, id string) error {
	tr, err := m.Trace(id)
	if err != nil {
		return err // history.ErrNoTrace: the run made no call
	}
	shot := map[int]bool{}
	for _, f := range tr.Failures {
		shot[f.Seq] = len(f.Image) > 0
	}
	for _, c := range tr.Calls {
		if !c.OK() {
			fmt.Fprintf(w, "%s %s on %q: %s (screenshot: %v)\n", c.Method, c.Target, c.Page, c.Code, shot[c.Seq])
		}
	}
	return nil
}

// Every kind of SDK call that reaches the host is in the run's trace,
// once, with its method, tab and outcome: the tab calls, the tabs calls
// and the other services. None of the values passed is: what was typed,
// written to the clipboard, notified, evaluated, stored in the config or
// asked of a select that does not have it.
func TestBrowserTraceEveryCall(t *testing.T) {
	const secret = "SECRET-v41ue-wombat"
	srv := testenv.HTMLSite(`<title>Form</title><h1>Form</h1>
<label for=w>Secret word</label><input id=w>
<label><input type=checkbox> Agree</label>
<label for=c>Colour</label><select id=c><option>Red</option><option>Blue</option></select>
<button>Send</button>`)
	t.Cleanup(srv.Close)
	e := newBrowserEnvWith(t, envOptions{site: srv, config: func(c *runner.Config) { c.Host.Clipboard = &hosttest.Clipboard{} }})
	entry := e.run(t, "every-call.ts", fmt.Sprintf(`// @permissions browser forms page-js clipboard
import { clipboard, config, context, paneControls, tabs, ui, workspace } from "tranquil/automation";
const SECRET = %q;
const code = async (f: () => Promise<unknown>) => {
  try { await f(); return "none"; } catch (e) { return (e as { code?: string }).code ?? "threw"; }
};
await tabs.active();
await tabs.all();
await tabs.find("no-such-tab-zz");
const tab = await tabs.open(%q);
await tab.url();
await tab.title();
await tab.goto(%q);
await tab.waitFor("h1");
await tab.waitFor({ label: "Secret word" }, { state: "visible" });
await tab.fill({ label: "Secret word" }, SECRET);
await tab.value({ label: "Secret word" });
await tab.text({ role: "heading" });
await tab.attribute({ label: "Secret word" }, "id");
await tab.checked({ label: "Agree" });
await tab.check({ label: "Agree" });
await tab.visible({ role: "button", name: "Send" });
await tab.count({ role: "button" });
await tab.expect({ label: "Secret word" }).toHaveValue(SECRET);
await tab.select({ label: "Colour" }, "Blue");
const selectCode = await code(() => tab.select({ label: "Colour" }, SECRET, { timeout: 300 }));
await tab.evaluate((s: string) => s.length, SECRET);
const evaluateCode = await code(() => tab.evaluate((s: string) => { throw new Error(s); }, SECRET));
await tab.screenshot();
await tab.press("Tab");
await tab.onDialog("dismiss");
await tab.click({ role: "button", name: "Send" });
await tab.close();
await clipboard.write(SECRET);
await clipboard.read();
await ui.notify(SECRET);
await ui.open(SECRET + ".txt");
const workspaceCode = await code(() => workspace.projectDir());
await config.set("k", SECRET);
await config.get("k");
await config.keys();
await config.delete("k");
await paneControls.register("p", () => 1);
await paneControls.unregister("p");
await context.result({ tab: tab.id, selectCode, evaluateCode, workspaceCode });
`, secret, srv.URL+"/form", srv.URL+"/form"))
	var res struct{ Tab, SelectCode, EvaluateCode, WorkspaceCode string }
	result(t, entry, &res)
	require.NotEqual(t, "none", res.SelectCode)
	require.NotEqual(t, "none", res.EvaluateCode)
	// A host without a workspace fails with a plain error, which the
	// trace files under errcode.Error.
	require.Equal(t, "threw", res.WorkspaceCode)

	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	type want struct {
		n    int
		tab  string
		code string
	}
	tabCall := want{1, res.Tab, ""}
	wants := map[string]want{
		"tabs.active": {1, "", ""}, "tabs.all": {1, "", ""}, "tabs.find": {1, "", ""}, "tabs.open": tabCall,
		"tab.url": tabCall, "tab.title": tabCall, "tab.goto": tabCall, "tab.waitFor": {2, res.Tab, ""},
		"tab.fill": tabCall, "tab.value": tabCall, "tab.text": tabCall, "tab.attribute": tabCall,
		"tab.checked": tabCall, "tab.check": tabCall, "tab.visible": tabCall, "tab.count": tabCall,
		"tab.expect": tabCall, "tab.select": {2, res.Tab, res.SelectCode}, "tab.evaluate": {2, res.Tab, res.EvaluateCode},
		"tab.screenshot": tabCall, "tab.press": tabCall, "tab.onDialog": tabCall, "tab.click": tabCall,
		"tab.close":       tabCall,
		"clipboard.write": {1, "", ""}, "clipboard.read": {1, "", ""}, "ui.notify": {1, "", ""}, "ui.open": {1, "", ""},
		"workspace.projectDir": {1, "", string(errcode.Error)},
		"config.set":           {1, "", ""}, "config.get": {1, "", ""}, "config.keys": {1, "", ""}, "config.delete": {1, "", ""},
		"paneControls.register": {1, "", ""}, "paneControls.unregister": {1, "", ""},
		"context.result": {1, "", ""},
	}
	got := map[string]want{}
	for _, c := range tr.Calls {
		w := got[c.Method]
		w.n++
		w.tab = c.Tab
		if c.Code != "" {
			w.code = c.Code // the one failure of a method, if any
		}
		got[c.Method] = w
		assert.NotZero(t, c.Start, c.Method)
		if strings.HasPrefix(c.Method, "tab.") && c.Method != "tab.close" {
			assert.Equal(t, srv.URL+"/form", c.Page, c.Method)
		}
	}
	assert.Equal(t, wants, got)
	assert.Equal(t, 0, tr.Dropped.Calls)

	var out strings.Builder
	require.NoError(t, explainRun(&out, e.m, entry.ID))
	assert.Equal(t, fmt.Sprintf("tab.select label \"Colour\" on %[1]q: %[2]s (screenshot: true)\n"+
		"tab.evaluate  on %[1]q: %[3]s (screenshot: false)\n"+
		"workspace.projectDir  on \"\": %[4]s (screenshot: false)\n",
		srv.URL+"/form", res.SelectCode, res.EvaluateCode, errcode.Error), out.String())

	raw, err := e.m.History().Trace(entry.ID)
	require.NoError(t, err)
	js, err := json.Marshal(tr)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), secret)
	assert.NotContains(t, string(js), secret)
	t.Logf("trace: %d calls, %d bytes stored (%d a call)", len(tr.Calls), len(raw), len(raw)/len(tr.Calls))
}

// The README's trace snippet is explainRun, which the test above runs.
func TestReadmeTraceSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## A run's trace")
	require.True(t, ok, "the README has no trace section")
	_, code, ok := strings.Cut(section, "```go\n")
	require.True(t, ok)
	code, _, _ = strings.Cut(code, "```")

	src, err := os.ReadFile("trace_browser_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "trace_browser_test.go", src, parser.ParseComments)
	require.NoError(t, err)
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "explainRun" {
			from, to := fset.Position(fn.Doc.Pos()).Offset, fset.Position(fn.End()).Offset
			assert.Equal(t, string(src[from:to])+"\n", code)
			return
		}
	}
	t.Fatal("no explainRun")
}

// siteLines maps each "// site:NAME" marker of src to its line (from 1).
func siteLines(src string) map[string]int {
	out := map[string]int{}
	for i, l := range strings.Split(src, "\n") {
		if _, name, ok := strings.Cut(l, "// site:"); ok {
			out[strings.TrimSpace(name)] = i + 1
		}
	}
	return out
}

// Every call in a real run's trace names the script's file and line that
// made it: in the script, inside a step's function, in a module the
// script imports (named relative to the script's folder), a call that
// failed and the script's last call; the column points into that line.
func TestBrowserTraceCallSites(t *testing.T) {
	e := newBrowserEnvWith(t, envOptions{site: traceSite(t)})
	helper := `import type { Tab } from "tranquil/automation";
export async function readTitle(tab: Tab): Promise<string> {
  return await tab.title(); // site:title
}
`
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "lib"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "lib", "helper.ts"), []byte(helper), 0o644))
	src := fmt.Sprintf(`// @permissions browser forms sites=127.0.0.1 read=lib
import { context, step, tabs } from "tranquil/automation";
import { readTitle } from "./lib/helper.ts";
const tab = await tabs.active(); // site:active
await tab.goto("%s/signup"); // site:goto
await step.do("fill the form", async () => {
  await tab.fill({ label: "Secret word" }, "x"); // site:fill
});
const title = await readTitle(tab);
await tab.expect({ label: "Secret word" }).toHaveValue("x"); // site:expect
let code = "none";
try { await tab.click({ role: "button", name: "Missing" }, { timeout: 300 }); } // site:click
catch (e) { code = (e as { code: string }).code; }
await context.result({ title, code }); // site:result
`, e.site.URL)
	entry := e.run(t, "callsites.ts", src)
	var res struct{ Title, Code string }
	result(t, entry, &res)
	require.Equal(t, "Sign up", res.Title)
	require.NotEqual(t, "none", res.Code)

	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	main, lib := siteLines(src), siteLines(helper)
	want := map[string]struct {
		file string
		line int
		text string
	}{
		"tabs.active": {"callsites.ts", main["active"], src},
		"tab.goto":    {"callsites.ts", main["goto"], src},
		"tab.fill":    {"callsites.ts", main["fill"], src},
		"tab.title":   {"lib/helper.ts", lib["title"], helper},
		"tab.click":   {"callsites.ts", main["click"], src},
		// Made three frames of the SDK's own below the script's.
		"tab.expect": {"callsites.ts", main["expect"], src},
		// The last call: its site is sent as the script ends.
		"context.result": {"callsites.ts", main["result"], src},
	}
	seen := map[string]bool{}
	for _, c := range tr.Calls {
		w, ok := want[c.Method]
		if !ok {
			continue
		}
		seen[c.Method] = true
		assert.Equal(t, w.file, c.File, c.Method)
		assert.Equal(t, w.line, c.Line, c.Method)
		line := strings.Split(w.text, "\n")[w.line-1]
		if assert.True(t, c.Column >= 1 && c.Column <= len(line), "%s: column %d", c.Method, c.Column) {
			assert.Regexp(t, `^[A-Za-z_$][\w$]*\(`, line[c.Column-1:], "%s: the column points at the call", c.Method)
		}
	}
	assert.Len(t, seen, len(want), "calls: %+v", tr.Calls)
	// The tab is named by its first page's title; no action screenshots
	// unless the host asks for them.
	require.Len(t, tr.Tabs, 1)
	assert.Equal(t, "Sign up", tr.Tabs[0].Title)
	assert.Empty(t, tr.Shots)

	// A script that dies of its failed call still places it.
	dies := fmt.Sprintf(`// @permissions browser forms sites=127.0.0.1
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("%s/signup");
await tab.click({ role: "button", name: "Missing" }, { timeout: 300 }); // site:dies
`, e.site.URL)
	entry = e.run(t, "dies.ts", dies)
	require.Equal(t, history.StateFailed, entry.State)
	tr, err = e.m.Trace(entry.ID)
	require.NoError(t, err)
	click := tr.Calls[len(tr.Calls)-1]
	require.Equal(t, "tab.click", click.Method)
	assert.False(t, click.OK())
	assert.Equal(t, "dies.ts", click.File)
	assert.Equal(t, siteLines(dies)["dies"], click.Line)
}

// With Config.TraceActionScreenshots, each page action keeps a masked
// screenshot of the page before it and, when it succeeded, after it; a
// failed one keeps its failure's evidence as without. Reads and
// navigations take none.
func TestBrowserTraceActionScreenshots(t *testing.T) {
	const value = "VALUE-shot-8812"
	e := newBrowserEnvWith(t, envOptions{site: traceSite(t), config: func(c *runner.Config) { c.TraceActionScreenshots = true }})
	entry := e.run(t, "shots.ts", fmt.Sprintf(`// @permissions browser forms sites=127.0.0.1
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("%s/signup");
await tab.fill({ label: "Secret word" }, "%s");
await tab.value({ label: "Secret word" });
let code = "none";
try { await tab.click({ role: "button", name: "Missing" }, { timeout: 300 }); }
catch (e) { code = (e as { code: string }).code; }
await context.result({ code });
`, e.site.URL, value))
	var res struct{ Code string }
	result(t, entry, &res)
	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	seqOf := map[string]int{}
	for _, c := range tr.Calls {
		seqOf[c.Method] = c.Seq
	}
	var got []string
	for _, s := range tr.Shots {
		for m, seq := range seqOf {
			if seq == s.Seq {
				got = append(got, m+" "+s.When)
			}
		}
		assert.Equal(t, trace.JPEG, s.ImageType)
		assert.True(t, strings.HasPrefix(string(s.Image), "\xff\xd8\xff"))
	}
	assert.Equal(t, []string{"tab.fill before", "tab.fill after", "tab.click before"}, got)
	require.Len(t, tr.Failures, 1)
	assert.Equal(t, seqOf["tab.click"], tr.Failures[0].Seq)
	assert.NotEmpty(t, tr.Failures[0].Image)
	raw, err := e.m.History().Trace(entry.ID)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), value)
	t.Logf("%d shots, trace %d bytes", len(tr.Shots), len(raw))
}
