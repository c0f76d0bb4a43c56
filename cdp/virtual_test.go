package cdp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Virtualized option lists: the list renders only the options in (or
// near) its scroller's view, so the option asked for is often not in the
// page at all until the list is searched or scrolled. Each list here
// comes from npm and holds a thousand options; the truth is read from the
// widget's own state.

// moreLibs checks the packages this file's pages load beyond the ones
// libsDir checks.
func moreLibs(t *testing.T, pkgs ...string) {
	t.Helper()
	dir := libsDir(t)
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); err != nil {
			t.Fatalf("the component library %s for the test pages is not installed in %s; install it with: %s", pkg, dir, libsInstall)
		}
	}
}

// itemLabel names option i so that no label holds another ("Item 0917"
// and "Item 0091" are both whole words).
func itemLabel(i int) string { return fmt.Sprintf("Item %04d", i) }

// selectItems selects the given items one after another and checks each
// read-back and the widget's state (state returns the value, "v<i>").
func selectItems(t *testing.T, tab *Tab, loc Locator, state string, items ...int) {
	t.Helper()
	ctx := tctx(t, 60*time.Second)
	for _, i := range items {
		start := time.Now()
		got, err := tab.Select(ctx, loc, itemLabel(i), FormOptions{})
		if err != nil {
			t.Fatalf("select %s: %v", itemLabel(i), err)
		}
		t.Logf("selected %s in %v", itemLabel(i), time.Since(start).Round(time.Millisecond))
		if got != itemLabel(i) {
			t.Errorf("select %s read back %q", itemLabel(i), got)
		}
		if v := truth(t, tab, state); v != fmt.Sprintf(`"v%d"`, i) {
			t.Fatalf("after choosing %s the widget holds %s", itemLabel(i), v)
		}
	}
}

// vsOptions is the setup of a thousand options for Virtual Select.
const vsOptions = `const options = Array.from({ length: 1000 }, (_, i) => ({ label: "Item " + String(i).padStart(4, "0"), value: "v" + i }));`

// Virtual Select renders the options of its dropdown a few at a time.
// With its search box, the option is typed there; without, the list is
// scrolled until it shows.
func TestVirtualSelectPlugin(t *testing.T) {
	moreLibs(t, "virtual-select-plugin")
	assets := []string{"virtual-select-plugin/dist/virtual-select.min.css", "virtual-select-plugin/dist/virtual-select.min.js"}
	t.Run("search", func(t *testing.T) {
		tab := newTabWith(t, libPage("/v-vs-search", assets, `<label id=vsl>Part</label><div id=vs></div>`,
			vsOptions+`VirtualSelect.init({ ele: "#vs", options, search: true, ariaLabelledby: "vsl" });`), TabOptions{})
		selectItems(t, tab, Locator{Role: "combobox", Name: "Part"}, `() => document.querySelector("#vs").value`, 917, 3, 640)
	})
	t.Run("scroll", func(t *testing.T) {
		tab := newTabWith(t, libPage("/v-vs-scroll", assets, `<label id=vsl>Part</label><div id=vs></div>`,
			vsOptions+`VirtualSelect.init({ ele: "#vs", options, search: false, ariaLabelledby: "vsl" });`), TabOptions{})
		// 640 after 917: the list opens scrolled to the choice, past it.
		selectItems(t, tab, Locator{Role: "combobox", Name: "Part"}, `() => document.querySelector("#vs").value`, 230, 917, 640)
	})
}

// A combobox over TanStack Virtual's core: the listbox is its scroller,
// and only the rows in view (and a few past it) are in the page.
func TestVirtualTanStack(t *testing.T) {
	moreLibs(t, "@tanstack/virtual-core")
	page := `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'self' 'unsafe-inline'"><title>tanstack</title>
<style>#list { height: 200px; width: 240px; overflow: auto; border: 1px solid #999; position: relative; }
#list [role=option] { position: absolute; left: 0; right: 0; height: 28px; line-height: 28px; padding: 0 6px; }
#list [role=option]:hover { background: #def; }</style>
<span id=lab>Part</span>
<button id=combo role=combobox aria-labelledby=lab aria-controls=list aria-expanded=false>Choose…</button>
<div id=list role=listbox hidden><div id=spacer style="position:relative"></div></div>
<script>window.process = { env: { NODE_ENV: "production" } }; // the package reads process.env.NODE_ENV</script><script type=module>
import { Virtualizer, observeElementRect, observeElementOffset, elementScroll } from "/lib/@tanstack/virtual-core/dist/esm/index.js";
const labels = Array.from({ length: 1000 }, (_, i) => "Item " + String(i).padStart(4, "0"));
window.state = { value: "" };
const combo = document.getElementById("combo"), list = document.getElementById("list"), spacer = document.getElementById("spacer");
const v = new Virtualizer({
  count: labels.length, getScrollElement: () => list, estimateSize: () => 28, overscan: 3,
  observeElementRect, observeElementOffset, scrollToFn: elementScroll, onChange: render,
});
function render() {
  spacer.style.height = v.getTotalSize() + "px";
  spacer.replaceChildren(...v.getVirtualItems().map((it) => {
    const o = document.createElement("div");
    o.setAttribute("role", "option");
    o.setAttribute("aria-selected", String(state.value === "v" + it.index));
    o.style.top = it.start + "px";
    o.textContent = labels[it.index];
    o.addEventListener("click", () => { state.value = "v" + it.index; combo.textContent = labels[it.index]; toggle(false); });
    return o;
  }));
}
function toggle(open) {
  list.hidden = !open;
  combo.setAttribute("aria-expanded", String(open));
  if (open) { v._willUpdate(); v.measure(); render(); }
}
v._didMount();
combo.addEventListener("click", () => toggle(list.hidden));
</script>`
	tab := newTabWith(t, serve("/v-tanstack", page), TabOptions{})
	selectItems(t, tab, Locator{Role: "combobox", Name: "Part"}, `() => window.state.value`, 455, 12, 999)
	// An option the list does not hold fails once the list has been
	// scrolled through, not at the deadline, naming the option.
	start := time.Now()
	_, err := tab.Select(tctx(t, 60*time.Second), Locator{Role: "combobox", Name: "Part"}, "Item 1234", FormOptions{})
	if !errors.Is(err, errcode.NoOption) || !strings.Contains(err.Error(), `option "Item 1234"`) {
		t.Fatalf("choosing an option the list lacks: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the scan of the whole list took %v", d)
	}
	if v := truth(t, tab, `() => window.state.value`); v != `"v999"` {
		t.Errorf("the widget holds %s", v)
	}
}

// A combobox whose popup is Lit's virtualizer, a web component that is
// its own scroller and renders only the rows in view.
func TestVirtualLit(t *testing.T) {
	moreLibs(t, "@lit-labs/virtualizer", "lit")
	imports := map[string]string{"@lit-labs/virtualizer/": "@lit-labs/virtualizer/"}
	for k, v := range litImports {
		imports[k] = v
	}
	tab := newTabWith(t, modulePage("/v-lit", imports, `<style>lit-virtualizer { height: 200px; width: 240px; border: 1px solid #999; }
lit-virtualizer [role=option] { height: 28px; line-height: 28px; padding: 0 6px; width: 100%; }</style>
<span id=lab>Part</span> <span id=combo role=combobox tabindex=0 aria-labelledby=lab aria-controls=list aria-expanded=false>Choose…</span>
<div id=pop hidden></div>`, `
import { html, render } from "lit";
import "@lit-labs/virtualizer/lit-virtualizer.js";
const labels = Array.from({ length: 1000 }, (_, i) => "Item " + String(i).padStart(4, "0"));
window.state = { value: "" };
const combo = document.getElementById("combo"), pop = document.getElementById("pop");
const pickIt = (i) => { state.value = "v" + i; combo.textContent = labels[i]; toggle(false); };
function toggle(open) {
  pop.hidden = !open;
  combo.setAttribute("aria-expanded", String(open));
  render(open ? html`+"`"+`<lit-virtualizer id=list role=listbox scroller .items=${labels}
    .renderItem=${(l, i) => html`+"`"+`<div role=option aria-selected=${state.value === "v" + i} @click=${() => pickIt(i)}>${l}</div>`+"`"+`}></lit-virtualizer>`+"`"+` : null, pop);
}
combo.addEventListener("click", () => toggle(pop.hidden));`), TabOptions{})
	selectItems(t, tab, Locator{Role: "combobox", Name: "Part"}, `() => window.state.value`, 377, 801, 5)
}

// The runtime sent to pages holds the dropdown code kept in options.js.
func TestFormsSourceSplicesOptions(t *testing.T) {
	if !strings.Contains(formsSource, "async function optionAt(") || strings.Contains(formsSource, "// @include options.js") {
		t.Fatal("options.js was not spliced into the form runtime")
	}
}
