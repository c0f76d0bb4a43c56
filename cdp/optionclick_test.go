package cdp

import (
	"fmt"
	"testing"
	"time"
)

// An option click is checked where it lands, as a click is: a list that
// moves after the check (the last step of its opening animation, a
// reposition once its size is known) must not turn the click into a
// choice of the option next to it. Each page moves its library's open
// list down by one option the first time the pointer reaches an option,
// and puts it back once an option is pressed and released.

// shiftOnce is that page script, for the list matching listSel.
func shiftOnce(listSel string) string {
	return `window.shifts = 0;
let shifted = false;
document.addEventListener("mousemove", (e) => {
  const o = e.target.closest && e.target.closest("[role=option]");
  const list = document.querySelector(` + fmt.Sprintf("%q", listSel) + `);
  if (shifted || !o || !list || !list.contains(o)) return;
  shifted = true;
  window.shifts++;
  list.style.transform = "translateY(" + o.getBoundingClientRect().height + "px)";
}, true);
document.addEventListener("mouseup", (e) => {
  if (!e.target.closest || !e.target.closest("[role=option]")) return;
  shifted = false;
  const list = document.querySelector(` + fmt.Sprintf("%q", listSel) + `);
  if (list) list.style.transform = "";
}, true);`
}

// selectShifted chooses options of a list that shifts under the pointer,
// checking each against the select the library keeps.
func selectShifted(t *testing.T, tab *Tab, id string) {
	t.Helper()
	ctx := tctx(t, 60*time.Second)
	fruits := []struct{ label, value string }{{"Cherry", "c"}, {"Banana", "b"}, {"Damson", "d"}}
	for _, f := range fruits {
		got, err := tab.Select(ctx, Locator{Label: "Fruit"}, f.label, FormOptions{})
		if err != nil {
			t.Fatalf("select %s: %v", f.label, err)
		}
		if got != f.label {
			t.Errorf("select %s read back %q", f.label, got)
		}
		if v := truth(t, tab, `() => document.getElementById("`+id+`").value`); v != fmt.Sprintf("%q", f.value) {
			t.Fatalf("after choosing %s the select holds %s", f.label, v)
		}
	}
	// The list shifts when the pointer first moves onto an option; a
	// choice whose pointer needed no move over another option may not
	// shift it, but the first always does, so the check was exercised.
	if v := truth(t, tab, `() => window.shifts`); v == "0" {
		t.Fatal("the list never shifted under the pointer: the test checked nothing")
	}
}

const fruitSelect = `<option value="">Pick one</option><option value=a>Apple</option><option value=b>Banana</option>` +
	`<option value=c>Cherry</option><option value=d>Damson</option><option value=e>Elderberry</option></select>`

func TestOptionClickLandsTomSelect(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/oc-tom", []string{"tom-select/dist/css/tom-select.css", "tom-select/dist/js/tom-select.complete.min.js"},
		`<style>.ts-wrapper { width: 240px; }</style><label for=ts>Fruit</label><select id=ts>`+fruitSelect,
		`new TomSelect("#ts", {});`+shiftOnce(".ts-dropdown")), TabOptions{})
	selectShifted(t, tab, "ts")
}

func TestOptionClickLandsChoices(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/oc-choices", []string{"choices.js/public/assets/styles/choices.min.css", "choices.js/public/assets/scripts/choices.min.js"},
		`<div style="width:240px"><label for=ch>Fruit</label><select id=ch>`+fruitSelect+`</div>`,
		`window.choices = new Choices("#ch", { shouldSort: false });`+shiftOnce(".choices__list--dropdown")), TabOptions{})
	selectShifted(t, tab, "ch")
}

func TestOptionClickLandsSelect2(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/oc-select2", []string{"select2/dist/css/select2.min.css", "jquery/dist/jquery.min.js", "select2/dist/js/select2.min.js"},
		`<label for=s2>Fruit</label><select id=s2 style="width:240px">`+fruitSelect,
		`$("#s2").select2();`+shiftOnce(".select2-results__options")), TabOptions{})
	selectShifted(t, tab, "s2")
}
