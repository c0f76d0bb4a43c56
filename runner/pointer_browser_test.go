package runner_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// pointerPage is an app whose state the script's pointer and keyboard
// verbs change: a menu that opens on :hover, a cell a double click puts
// into editing, a list reordered by HTML drag and drop, an editor that
// builds its text from key events, and a grid to read back.
const pointerPage = `<title>App</title>
<style>.menu ul { display: none } .menu:hover ul { display: block } li.item { height: 28px; margin: 4px; background: #eee }</style>
<nav class=menu><button>Account</button><ul><li><a href="#settings">Settings</a></li></ul></nav>
<div id=cell style="width:160px;height:30px">Ada</div><input id=edit aria-label=Edit style="display:none">
<ul id=list><li class=item draggable=true>One</li><li class=item draggable=true>Two</li><li class=item draggable=true>Three</li></ul>
<div role=textbox aria-label=Editor tabindex=0 id=editor style="height:30px;border:1px solid">…</div>
<label for=q>Search</label><input id=q>
<div role=grid aria-label=People>
<div role=row><span role=columnheader>Name</span><span role=columnheader>Role</span></div>
<div role=row><span role=gridcell>Ada</span><span role=gridcell>Admin</span></div>
<div role=row><span role=gridcell>Bob</span><span role=gridcell>Guest</span></div>
</div>
<input class=v value=a><input class=v value=b>
<script>
window.app = { order: ["One", "Two", "Three"], text: "", editing: false };
const cell = document.getElementById("cell"), edit = document.getElementById("edit");
cell.addEventListener("dblclick", (e) => { if (e.isTrusted) { app.editing = true; cell.style.display = "none"; edit.style.display = ""; } });
const list = document.getElementById("list");
let dragged = "";
list.addEventListener("dragstart", (e) => { dragged = e.target.textContent; e.dataTransfer.setData("text/plain", dragged); });
list.addEventListener("dragover", (e) => e.preventDefault());
list.addEventListener("drop", (e) => {
  e.preventDefault();
  const to = e.target.closest("li").textContent;
  app.order.splice(app.order.indexOf(dragged), 1);
  app.order.splice(app.order.indexOf(to), 0, dragged);
  list.replaceChildren(...app.order.map((s) => Object.assign(document.createElement("li"), { className: "item", draggable: true, textContent: s })));
});
const ed = document.getElementById("editor");
ed.addEventListener("keydown", (e) => { if (e.isTrusted && e.key.length === 1) { app.text += e.key; ed.textContent = app.text; } e.preventDefault(); });
</script>`

// A real script hovers, double-clicks, drags, focuses and types on a page
// whose own state says each worked, and reads a grid, texts and values in
// one call each; every call is in the action log and the trace, never
// what was typed.
func TestBrowserPointerVerbs(t *testing.T) {
	t.Parallel() // see parallel_test.go
	const secret = "typed-zq81x"
	srv := testenv.HTMLSite(pointerPage)
	t.Cleanup(srv.Close)
	e := newBrowserEnvWith(t, envOptions{site: srv})
	entry := e.run(t, "pointer.ts", fmt.Sprintf(`// @permissions browser forms page-js sites=127.0.0.1
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto(%q);
const out: Record<string, unknown> = {};
const code = async (f: () => Promise<unknown>) => {
  try { await f(); return "none"; } catch (e) { return (e as { code?: string }).code ?? "threw"; }
};
await tab.hover({ role: "button", name: "Account" });
out.menu = await tab.visible({ role: "link", name: "Settings" });
await tab.click({ role: "link", name: "Settings" });
await tab.dblclick({ text: "Ada", within: { selector: "body > div#cell" } });
await tab.dragTo({ text: "Three" }, { text: "One" });
await tab.focus({ label: "Search" });
out.focused = await tab.evaluate(() => document.activeElement?.id);
await tab.type({ role: "textbox", name: "Editor" }, %q, { delay: 5 });
out.app = await tab.evaluate(() => (window as unknown as { app: unknown }).app);
out.hash = await tab.evaluate(() => location.hash);
out.table = await tab.table({ role: "grid", name: "People" });
out.texts = await tab.texts({ selector: "#list li" });
out.values = await tab.values({ selector: ".v" });
out.tooLong = await code(() => tab.type({ label: "Search" }, "x".repeat(10001)));
out.notTable = await code(() => tab.table({ label: "Search" }, { timeout: 300 }));
await context.result(out);
`, srv.URL+"/app", secret))
	var res struct {
		Menu    bool
		Focused string
		App     struct {
			Order   []string
			Text    string
			Editing bool
		}
		Hash  string
		Table struct {
			Headers []string
			Rows    [][]string
		}
		Texts, Values     []string
		TooLong, NotTable string
	}
	result(t, entry, &res)
	assert.True(t, res.Menu, "the :hover menu opened")
	assert.Equal(t, "#settings", res.Hash)
	assert.True(t, res.App.Editing, "the double click started editing")
	assert.Equal(t, []string{"Three", "One", "Two"}, res.App.Order, "the drag reordered the app's list")
	assert.Equal(t, "q", res.Focused)
	assert.Equal(t, secret, res.App.Text, "the editor got every key")
	assert.Equal(t, []string{"Name", "Role"}, res.Table.Headers)
	assert.Equal(t, [][]string{{"Ada", "Admin"}, {"Bob", "Guest"}}, res.Table.Rows)
	assert.Equal(t, []string{"Three", "One", "Two"}, res.Texts)
	assert.Equal(t, []string{"a", "b"}, res.Values)
	assert.Equal(t, "limit_exceeded", res.TooLong)
	assert.Equal(t, "bad_target", res.NotTable)

	acts := actions(entry)
	for _, m := range []string{"hover", "click", "dblclick", "dragTo", "focus", "type", "table", "texts", "values"} {
		assert.Contains(t, acts, m+":ok@127.0.0.1")
	}
	assert.Contains(t, acts, "table:bad_target@127.0.0.1")
	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	traced := map[string]string{}
	for _, c := range tr.Calls {
		if c.Target != "" { // a call refused before its target was looked at has none
			traced[c.Method] = c.Target
		}
	}
	assert.Equal(t, `role "button" name "Account"`, traced["tab.hover"])
	assert.Equal(t, `text "Three"`, traced["tab.dragTo"])
	for _, m := range []string{"tab.dblclick", "tab.focus", "tab.type", "tab.table", "tab.texts", "tab.values"} {
		assert.NotEmpty(t, traced[m], m)
	}
	raw, _ := json.Marshal(entry.Actions)
	assert.False(t, strings.Contains(string(raw), secret), "the log never holds what was typed")
	js, _ := json.Marshal(tr)
	assert.False(t, strings.Contains(string(js), secret), "nor does the trace")
}

// The pointer verbs need forms: a script with browser alone is refused
// before anything reaches the page, and the bulk readers need only
// browser.
func TestBrowserPointerVerbsNeedForms(t *testing.T) {
	t.Parallel() // see parallel_test.go
	srv := testenv.HTMLSite(pointerPage)
	t.Cleanup(srv.Close)
	e := newBrowserEnvWith(t, envOptions{site: srv})
	entry := e.run(t, "readonly.ts", fmt.Sprintf(`// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto(%q);
const code = async (f: () => Promise<unknown>) => {
  try { await f(); return "none"; } catch (e) { return (e as { code?: string }).code ?? "threw"; }
};
await context.result({
  hover: await code(() => tab.hover({ role: "button", name: "Account" })),
  drag: await code(() => tab.dragTo({ text: "Three" }, { text: "One" })),
  type: await code(() => tab.type({ label: "Search" }, "x")),
  texts: await tab.texts({ selector: "#list li" }),
});
`, srv.URL+"/app"))
	var res struct {
		Hover, Drag, Type string
		Texts             []string
	}
	result(t, entry, &res)
	assert.Equal(t, "not_granted", res.Hover)
	assert.Equal(t, "not_granted", res.Drag)
	assert.Equal(t, "not_granted", res.Type)
	assert.Equal(t, []string{"One", "Two", "Three"}, res.Texts)
}
