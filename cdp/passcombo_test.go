package cdp

import (
	"fmt"
	"testing"
	"time"
)

// Comboboxes whose input takes no pointer (see testdata/datefield): the
// label names the input, the click goes to what receives the pointer at
// the widget, and the choice is read from the widget and checked against
// what its onChange reported. react-select without search draws its
// input at no size and PrimeReact's Dropdown hides its input under its
// display (both failed as covered before passFace); MUI's and React
// Aria's selects label their display and are here to stay working.
func TestPassThroughCombobox(t *testing.T) {
	moreLibs(t, "react-select", "primereact", "@mui/material")
	tab := newTabWith(t, datefieldPage(t, "/pt-combo", `<div data-select=mui data-label="Flavour" data-options="Vanilla,Chocolate,Strawberry"></div>`+
		`<div style="margin-top:300px" data-select=rs data-label="Topping" data-options="Nuts,Sprinkles,Syrup"></div>`+
		`<div style="margin-top:300px" data-select=aria data-label="Sauce" data-options="Caramel,Fudge,Honey"></div>`+
		`<div style="margin-top:300px" data-select=prime data-label="Cone" data-options="Waffle,Sugar,Cup"></div>`), TabOptions{})
	for _, label := range []string{"Flavour", "Topping", "Sauce", "Cone"} {
		t.Run(label, func(t *testing.T) {
			ctx := tctx(t, 15*time.Second)
			for _, want := range map[string][]string{"Flavour": {"Chocolate", "Strawberry"}, "Topping": {"Syrup", "Nuts"}, "Sauce": {"Fudge", "Honey"}, "Cone": {"Sugar", "Cup"}}[label] {
				got, err := tab.Select(ctx, Locator{Label: label}, want, FormOptions{})
				if err != nil {
					t.Fatalf("select %s: %v", want, err)
				}
				if got != want {
					t.Errorf("select %s read back %q", want, got)
				}
				if v := truth(t, tab, fmt.Sprintf(`() => window.dateValues[%q]`, label)); v != fmt.Sprintf("%q", want) {
					t.Errorf("after select %s the widget holds %s", want, v)
				}
			}
		})
	}
}
