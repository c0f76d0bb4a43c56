package cdp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Options inside a list that scrolls: the list is in the window, but the
// option is below its scroller's fold, rendered and clipped. It is
// scrolled into the list's view before it is clicked, and an error about
// it names the option. The truth is the native select each library keeps.

// manyOptions is a select of forty options, "Option 01" to "Option 40",
// valued "o1" to "o40".
func manyOptions(id string) string {
	var b strings.Builder
	b.WriteString(`<select id=` + id + `><option value="">Pick one</option>`)
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, `<option value=o%d>Option %02d</option>`, i, i)
	}
	b.WriteString(`</select>`)
	return b.String()
}

// selectFar chooses options past the fold (and one back above it) and
// checks the select the library keeps.
func selectFar(t *testing.T, tab *Tab, loc Locator, id string) {
	t.Helper()
	ctx := tctx(t, 60*time.Second)
	for _, i := range []int{9, 10, 40, 2} {
		want := fmt.Sprintf("Option %02d", i)
		got, err := tab.Select(ctx, loc, want, FormOptions{})
		if err != nil {
			t.Fatalf("select %s: %v", want, err)
		}
		if got != want {
			t.Errorf("select %s read back %q", want, got)
		}
		if v := truth(t, tab, `() => document.getElementById("`+id+`").value`); v != fmt.Sprintf(`"o%d"`, i) {
			t.Fatalf("after choosing %s the select holds %s", want, v)
		}
	}
}

func TestScrollListTomSelect(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/sl-tom", []string{"tom-select/dist/css/tom-select.css", "tom-select/dist/js/tom-select.complete.min.js"},
		`<style>.ts-wrapper { width: 240px; } .covered .ts-dropdown-content::after { content: ""; position: absolute; inset: 0; }</style>
<label for=ts>Part</label>`+manyOptions("ts")+`<div style="height:2000px"></div>`,
		`new TomSelect("#ts", { maxOptions: null });`), TabOptions{})
	selectFar(t, tab, Locator{Label: "Part"}, "ts")

	// Something over the list: the error names the option, not the
	// combobox it belongs to.
	truth(t, tab, `() => { document.querySelector(".ts-wrapper").classList.add("covered"); return true; }`)
	_, err := tab.Select(tctx(t, 3*time.Second), Locator{Label: "Part"}, "Option 12", FormOptions{})
	if !errors.Is(err, errcode.Obscured) || !strings.Contains(err.Error(), `option "Option 12"`) {
		t.Fatalf("an option under a cover: %v", err)
	}
}

func TestScrollListChoices(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/sl-choices", []string{"choices.js/public/assets/styles/choices.min.css", "choices.js/public/assets/scripts/choices.min.js"},
		`<div style="width:240px"><label for=ch>Part</label>`+manyOptions("ch")+`</div><div style="height:2000px"></div>`,
		`window.choices = new Choices("#ch", { shouldSort: false, searchEnabled: false });`), TabOptions{})
	selectFar(t, tab, Locator{Label: "Part"}, "ch")
}

func TestScrollListSelect2(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/sl-select2", []string{"select2/dist/css/select2.min.css", "jquery/dist/jquery.min.js", "select2/dist/js/select2.min.js"},
		`<label for=s2>Part</label>`+strings.Replace(manyOptions("s2"), "<select ", `<select style="width:240px" `, 1)+`<div style="height:2000px"></div>`,
		`$("#s2").select2({ minimumResultsForSearch: Infinity });`), TabOptions{})
	selectFar(t, tab, Locator{Label: "Part"}, "s2")
}
