package cdp

import (
	"testing"
	"time"
)

// Inputs that take no pointer themselves, drawn by their label: the click
// goes to the label (what receives the pointer) and the state is read
// back from the input. Materialize draws its switch over a 0x0 checkbox
// inside the label, and gives every checkbox pointer-events: none with
// its label drawing the box.

func TestPassThroughMaterializeSwitch(t *testing.T) {
	moreLibs(t, "materialize-css")
	tab := newTabWith(t, libPage("/pt-mz-switch", []string{"materialize-css/dist/css/materialize.min.css"},
		`<div class=switch><label>Off<input id=sw type=checkbox role=switch aria-label="Dark mode"><span class=lever></span>On</label></div>`, ``), TabOptions{})
	checkBoth(t, tab, Locator{Role: "switch", Name: "Dark mode"}, `() => document.getElementById("sw").checked`)
}

func TestPassThroughMaterializeCheckbox(t *testing.T) {
	moreLibs(t, "materialize-css")
	tab := newTabWith(t, libPage("/pt-mz-check", []string{"materialize-css/dist/css/materialize.min.css"},
		`<p><input id=cb type=checkbox><label for=cb>Remember me</label></p>
<p><label><input id=cb2 type=checkbox><span>Send news</span></label></p>`, ``), TabOptions{})
	checkBoth(t, tab, Locator{Label: "Remember me"}, `() => document.getElementById("cb").checked`)
	checkBoth(t, tab, Locator{Label: "Send news"}, `() => document.getElementById("cb2").checked`)
	// A click goes to the label too.
	ctx := tctx(t, 20*time.Second)
	if err := tab.ClickElement(ctx, Locator{Label: "Remember me"}, FormOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := truth(t, tab, `() => document.getElementById("cb").checked`); got != "false" {
		t.Errorf("after a click the box holds %s", got)
	}
}

// Bulma's switch keeps its checkbox transparent at the start of the
// <label for> that draws the switch.
func TestPassThroughBulmaSwitch(t *testing.T) {
	moreLibs(t, "bulma-switch")
	tab := newTabWith(t, libPage("/pt-bulma", []string{"bulma-switch/dist/css/bulma-switch.min.css"},
		`<div class=field><input id=sw type=checkbox role=switch class=switch><label for=sw>Dark mode</label></div>`, ``), TabOptions{})
	checkBoth(t, tab, Locator{Role: "switch", Name: "Dark mode"}, `() => document.getElementById("sw").checked`)
}
