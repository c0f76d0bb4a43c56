package cdp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// pageState reads a value the page's own code keeps, in its main world.
func pageState[T any](t *testing.T, tab *Tab, expr string) T {
	t.Helper()
	raw, err := tab.Evaluate(tctx(t, 5*time.Second), "() => "+expr)
	require.NoError(t, err)
	var v T
	require.NoError(t, json.Unmarshal(raw, &v), string(raw))
	return v
}

const hoverPage = `<title>hover</title>
<style>.menu .items { display: none } .menu:hover .items { display: block }</style>
<div id=tip style="margin-bottom:40px;width:120px;height:30px;background:#eee">Help</div>
<nav class=menu><button id=file>File</button><ul class=items><li><a href="#new">New</a></li></ul></nav>
<script>
window.hovers = [];
document.getElementById("tip").addEventListener("mouseenter", (e) => hovers.push([e.isTrusted, e.offsetX, e.offsetY]));
</script>`

// Hovering opens a menu drawn by :hover alone: the page's own CSS decides,
// so only a real pointer over the element shows it.
func TestHoverOpensMenu(t *testing.T) {
	tab := newTab(t, serve("/hover", hoverPage))
	ctx := tctx(t, 20*time.Second)
	shown, err := tab.IsVisible(ctx, Locator{Role: "link", Name: "New"})
	require.NoError(t, err)
	require.False(t, shown, "the menu is closed before the hover")
	require.NoError(t, tab.Hover(ctx, Locator{Role: "button", Name: "File"}, ClickOptions{}))
	shown, err = tab.IsVisible(ctx, Locator{Role: "link", Name: "New"})
	require.NoError(t, err)
	assert.True(t, shown, "the :hover menu opened")
	// The menu stays open while the pointer is over it: its item can be
	// clicked.
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "link", Name: "New"}, FormOptions{}))
	assert.Equal(t, "#new", pageState[string](t, tab, "location.hash"))

	require.NoError(t, tab.Hover(ctx, Locator{Selector: "#tip"}, ClickOptions{Position: &Point{X: 5, Y: 7}}))
	hovers := pageState[[][]any](t, tab, "hovers")
	require.Len(t, hovers, 1)
	assert.Equal(t, []any{true, 5.0, 7.0}, hovers[0], "a trusted mouseenter at the position asked for")

	require.NoError(t, tab.Hover(ctx, Locator{Selector: "#file"}, ClickOptions{FormOptions: FormOptions{DryRun: true}}))
}

const clicksPage = `<title>clicks</title>
<div id=cell style="width:200px;height:40px;background:#def">Ada</div>
<input id=edit style="display:none">
<div id=b role=button style="width:100px;height:40px;background:#fed">B</div>
<script>
window.log = [];
const cell = document.getElementById("cell"), edit = document.getElementById("edit");
cell.addEventListener("dblclick", (e) => { if (!e.isTrusted) return; cell.style.display = "none"; edit.style.display = ""; edit.value = cell.textContent; edit.focus(); });
const b = document.getElementById("b");
for (const type of ["click", "contextmenu", "auxclick"]) b.addEventListener(type, (e) => {
  log.push({ type, trusted: e.isTrusted, button: e.button, detail: e.detail, shift: e.shiftKey, alt: e.altKey, x: e.offsetX, y: e.offsetY });
});
</script>`

// A double click puts a cell into editing, as grids do: the page's own
// dblclick handler decides. Buttons, modifiers, counts and positions reach
// the page as asked.
func TestClickVariants(t *testing.T) {
	tab := newTab(t, serve("/clicks", clicksPage))
	ctx := tctx(t, 20*time.Second)
	require.NoError(t, tab.DblClick(ctx, Locator{Text: "Ada"}, ClickOptions{}))
	assert.Equal(t, "edit", pageState[string](t, tab, "document.activeElement.id"), "the double click opened the editor")
	v, err := tab.Value(ctx, Locator{Selector: "#edit"})
	require.NoError(t, err)
	assert.Equal(t, "Ada", v)

	b := Locator{Selector: "#b"}
	require.NoError(t, tab.ClickWith(ctx, b, ClickOptions{Button: "right"}))
	require.NoError(t, tab.ClickWith(ctx, b, ClickOptions{Modifiers: Shift | Alt, Position: &Point{X: 10, Y: 12}}))
	require.NoError(t, tab.ClickWith(ctx, b, ClickOptions{Button: "middle"}))
	type ev struct {
		Type           string
		Trusted        bool
		Button, Detail int
		Shift, Alt     bool
		X, Y           float64
	}
	log := pageState[[]ev](t, tab, "log")
	require.Len(t, log, 4, "%+v", log)
	assert.Equal(t, ev{Type: "contextmenu", Trusted: true, Button: 2, X: 50, Y: 20}, log[0])
	assert.Equal(t, ev{Type: "auxclick", Trusted: true, Button: 2, Detail: 1, X: 50, Y: 20}, log[1])
	assert.Equal(t, ev{Type: "click", Trusted: true, Button: 0, Detail: 1, Shift: true, Alt: true, X: 10, Y: 12}, log[2])
	assert.Equal(t, ev{Type: "auxclick", Trusted: true, Button: 1, Detail: 1, X: 50, Y: 20}, log[3])

	err = tab.ClickWith(ctx, b, ClickOptions{Button: "fourth"})
	assert.ErrorIs(t, err, errcode.Invalid)
	err = tab.ClickWith(ctx, b, ClickOptions{ClickCount: 4})
	assert.ErrorIs(t, err, errcode.Invalid)
}

const dragPage = `<title>drag</title>
<style>li { height: 30px; margin: 4px; background: #eee; list-style: none }</style>
<ul id=html5><li draggable=true>One</li><li draggable=true>Two</li><li draggable=true>Three</li></ul>
<ul id=ptr><li>Red</li><li>Green</li><li>Blue</li></ul>
<script>
// An app whose state is the list's order: HTML drag and drop.
window.html5 = ["One", "Two", "Three"];
let dragged = null;
const h = document.getElementById("html5");
const render = (ul, items) => { ul.replaceChildren(...items.map((s) => { const li = document.createElement("li"); li.textContent = s; if (ul === h) li.draggable = true; return li; })); };
h.addEventListener("dragstart", (e) => { dragged = e.target.textContent; e.dataTransfer.setData("text/plain", dragged); });
h.addEventListener("dragover", (e) => e.preventDefault());
h.addEventListener("drop", (e) => {
  e.preventDefault();
  const to = e.target.closest("li").textContent;
  const from = e.dataTransfer.getData("text/plain");
  html5.splice(html5.indexOf(from), 1);
  html5.splice(html5.indexOf(to), 0, from);
  render(h, html5);
});
// The same with pointer events, as sortable libraries track the pointer.
window.ptr = ["Red", "Green", "Blue"];
const p = document.getElementById("ptr");
let held = null, moves = 0;
p.addEventListener("pointerdown", (e) => { held = e.target.closest("li").textContent; moves = 0; });
window.addEventListener("pointermove", () => { if (held) moves++; });
window.addEventListener("pointerup", (e) => {
  if (!held) return;
  const over = document.elementFromPoint(e.clientX, e.clientY);
  const li = over && over.closest("#ptr li");
  if (li && moves > 1 && li.textContent !== held) {
    ptr.splice(ptr.indexOf(held), 1);
    ptr.splice(ptr.indexOf(li.textContent) + 1, 0, held);
    render(p, ptr);
  }
  held = null;
});
</script>`

// Dragging reorders a list, and the app's state says so: an HTML drag and
// drop list and one built on pointer events.
func TestDragToReorders(t *testing.T) {
	tab := newTab(t, serve("/drag", dragPage))
	ctx := tctx(t, 20*time.Second)
	require.NoError(t, tab.DragTo(ctx, Locator{Text: "Three"}, Locator{Text: "One"}, FormOptions{}))
	assert.Equal(t, []string{"Three", "One", "Two"}, pageState[[]string](t, tab, "html5"))
	texts, err := tab.Texts(ctx, Locator{Selector: "#html5 li"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Three", "One", "Two"}, texts, "the page shows the new order")

	require.NoError(t, tab.DragTo(ctx, Locator{Text: "Red"}, Locator{Text: "Blue"}, FormOptions{}))
	assert.Equal(t, []string{"Green", "Blue", "Red"}, pageState[[]string](t, tab, "ptr"))

	// A dry run checks both ends and moves nothing.
	require.NoError(t, tab.DragTo(ctx, Locator{Text: "Green"}, Locator{Text: "Red"}, FormOptions{DryRun: true}))
	assert.Equal(t, []string{"Green", "Blue", "Red"}, pageState[[]string](t, tab, "ptr"))
	// A target that is not there is waited for, then named.
	short := tctx(t, 3*time.Second)
	err = tab.DragTo(short, Locator{Text: "Green"}, Locator{Text: "Purple"}, FormOptions{})
	assert.ErrorIs(t, err, errcode.NotFound)
}

const typePage = `<title>type</title>
<div id=editor tabindex=0 role=textbox aria-label=Editor style="min-height:40px;border:1px solid">...</div>
<div id=wrap style="padding:10px;border:1px solid"><span id=inner contenteditable=true>x</span></div>
<div id=plain>Plain</div>
<input id=field>
<script>
// An editor that keeps its own model from key events, as code editors do;
// it ignores input events and values.
window.model = "";
window.keys = 0;
const ed = document.getElementById("editor");
ed.addEventListener("keydown", (e) => {
  if (!e.isTrusted) return;
  keys++;
  if (e.key === "Enter") model += "\n";
  else if (e.key === "Backspace") model = model.slice(0, -1);
  else if (e.key.length === 1) model += e.key;
  e.preventDefault();
  ed.textContent = model;
});
document.getElementById("wrap").addEventListener("click", () => document.getElementById("inner").focus());
</script>`

// Type presses key by key into what has focus: an editor that builds its
// text from key events gets every key, Enter included.
func TestTypeAndFocus(t *testing.T) {
	tab := newTab(t, serve("/type", typePage))
	ctx := tctx(t, 20*time.Second)
	require.NoError(t, tab.Type(ctx, Locator{Role: "textbox", Name: "Editor"}, "Hi, Ada!\nBye é", TypeOptions{}))
	assert.Equal(t, "Hi, Ada!\nBye é", pageState[string](t, tab, "model"))
	assert.Equal(t, 14, pageState[int](t, tab, "keys"))

	// With a delay the keys are spaced out.
	start := time.Now()
	require.NoError(t, tab.Type(ctx, Locator{Selector: "#editor"}, "abc", TypeOptions{Delay: 100 * time.Millisecond}))
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	assert.Equal(t, "Hi, Ada!\nBye éabc", pageState[string](t, tab, "model"))

	// An outer box that takes no focus is clicked; the keys go where the
	// page's click put focus.
	require.NoError(t, tab.Type(ctx, Locator{Selector: "#wrap"}, "yz", TypeOptions{}))
	inner, err := tab.Text(ctx, Locator{Selector: "#inner"})
	require.NoError(t, err)
	assert.Contains(t, inner, "yz")

	require.NoError(t, tab.Focus(ctx, Locator{Selector: "#field"}, FormOptions{}))
	assert.Equal(t, "field", pageState[string](t, tab, "document.activeElement.id"))
	err = tab.Focus(ctx, Locator{Selector: "#plain"}, FormOptions{})
	assert.ErrorIs(t, err, errcode.BadTarget)

	long := make([]byte, MaxTypeKeys+1)
	for i := range long {
		long[i] = 'a'
	}
	err = tab.Type(ctx, Locator{Selector: "#editor"}, string(long), TypeOptions{})
	assert.ErrorIs(t, err, errcode.LimitExceeded)
}

// With sites set, the verbs act only on allowed documents, and type sends
// no key once focus is in another site's frame, even when the page moves
// it there after the first key.
func TestPointerVerbsKeepToSites(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	frame := serve("/type-frame-inner", `<input id=inner>`)
	page := serve("/type-frame", `<input id=outer><div id=box style="width:50px;height:20px">box</div>
<iframe id=f src="`+strings.Replace(frame, "127.0.0.1", "localhost", 1)+`"></iframe>
<script>
document.getElementById("outer").addEventListener("keydown", () => setTimeout(() => document.getElementById("f").focus()));
</script>`)
	tab := newTabWith(t, page, TabOptions{Sites: []string{"127.0.0.1"}})
	err := tab.Type(ctx, Locator{Selector: "#outer"}, "abcdef", TypeOptions{Delay: 50 * time.Millisecond})
	require.ErrorIs(t, err, errcode.SiteNotAllowed, "focus moved into another site's frame after the first key")
	v, err := tab.Value(ctx, Locator{Selector: "#outer"})
	require.NoError(t, err)
	assert.Equal(t, "a", v, "only the key before focus moved reached the page")

	other := newTabWith(t, page, TabOptions{Sites: []string{"shop.example"}})
	for name, err := range map[string]error{
		"hover":    other.Hover(ctx, Locator{Selector: "#box"}, ClickOptions{}),
		"dblclick": other.DblClick(ctx, Locator{Selector: "#box"}, ClickOptions{}),
		"dragTo":   other.DragTo(ctx, Locator{Selector: "#box"}, Locator{Selector: "#outer"}, FormOptions{}),
		"focus":    other.Focus(ctx, Locator{Selector: "#outer"}, FormOptions{}),
		"type":     other.Type(ctx, Locator{Selector: "#outer"}, "x", TypeOptions{}),
		"texts":    func() error { _, err := other.Texts(ctx, Locator{Selector: "div"}); return err }(),
		"table":    func() error { _, err := other.Table(ctx, Locator{Selector: "table"}); return err }(),
	} {
		assert.ErrorIs(t, err, errcode.SiteNotAllowed, name)
	}
}
