package cdp

import (
	"errors"
	"testing"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Sliders: an ARIA slider that is no input (a div with role slider) is
// set with the keys of the ARIA slider pattern, and a custom slider drawn
// over a visually hidden range input has its value set without a click,
// so what covers the input does not count. The truth is each widget's
// own state.

// fillSliders fills each value and checks the read-back and the widget.
func fillSliders(t *testing.T, tab *Tab, loc Locator, state string, values ...string) {
	t.Helper()
	ctx := tctx(t, 60*time.Second)
	for _, v := range values {
		st, err := tab.Fill(ctx, loc, v, FormOptions{})
		if err != nil {
			t.Fatalf("fill %s: %v", v, err)
		}
		if st.Value != v {
			t.Errorf("fill %s read back %q", v, st.Value)
		}
		if got := truth(t, tab, state); got != v && got != `"`+v+`"` {
			t.Fatalf("after fill %s the widget holds %s", v, got)
		}
	}
}

func TestSliderNoUiSlider(t *testing.T) {
	moreLibs(t, "nouislider")
	tab := newTabWith(t, libPage("/sl-noui", []string{"nouislider/dist/nouislider.css", "nouislider/dist/nouislider.min.js"},
		`<div id=sl style="width:300px;margin:40px"></div>`,
		`window.s = noUiSlider.create(document.getElementById("sl"), { start: 10, step: 1, range: { min: 0, max: 100 },
  format: { to: (v) => String(Math.round(v)), from: Number }, handleAttributes: [{ "aria-label": "Volume" }] });`), TabOptions{})
	loc := Locator{Role: "slider", Name: "Volume"}
	fillSliders(t, tab, loc, `() => window.s.get()`, "40", "37", "100", "0", "63")
	// A value outside its bounds is refused before a key is pressed.
	_, err := tab.Fill(tctx(t, 10*time.Second), loc, "150", FormOptions{})
	if !errors.Is(err, errcode.Invalid) {
		t.Fatalf("fill 150: %v", err)
	}
	// A value between its steps is reported with what it kept.
	tab2 := newTabWith(t, libPage("/sl-noui-step", []string{"nouislider/dist/nouislider.css", "nouislider/dist/nouislider.min.js"},
		`<div id=sl style="width:300px;margin:40px"></div>`,
		`window.s = noUiSlider.create(document.getElementById("sl"), { start: 10, step: 10, range: { min: 0, max: 100 },
  format: { to: (v) => String(Math.round(v)), from: Number }, handleAttributes: [{ "aria-label": "Volume" }] });`), TabOptions{})
	_, err = tab2.Fill(tctx(t, 20*time.Second), loc, "35", FormOptions{})
	var nc *NotCommittedError
	if !errors.As(err, &nc) || (nc.Kept != "30" && nc.Kept != "40") {
		t.Fatalf("fill 35 on a slider of tens: %v", err)
	}
	if got := truth(t, tab2, `() => window.s.get()`); got != `"`+nc.Kept+`"` {
		t.Errorf("the slider holds %s, the error says %s", got, nc.Kept)
	}
}

func TestSliderIonicRange(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/sl-ion", []string{"@ionic/core/css/ionic.bundle.css", "module:@ionic/core/dist/ionic/ionic.esm.js"},
		`<ion-range id=ir aria-label="Volume" min=0 max=50 value=10></ion-range>`, ``), TabOptions{})
	fillSliders(t, tab, Locator{Role: "slider", Name: "Volume"}, `() => document.getElementById("ir").value`, "40", "17", "50", "0")
}

// rangeslider.js hides its range input (1 px, transparent) and draws its
// own track and handle right after it; with labels on lines of their
// own, the drawing raised (z-index, as pages do to keep the handle above
// its neighbours) and another field in the same row, the drawing is what
// a click at the input lands on.
func TestSliderHiddenRangeInput(t *testing.T) {
	moreLibs(t, "rangeslider.js")
	tab := newTabWith(t, libPage("/sl-rs", []string{"rangeslider.js/dist/rangeslider.css", "jquery/dist/jquery.min.js", "rangeslider.js/dist/rangeslider.min.js"},
		`<style>label { display: block; } .rangeslider { z-index: 1; }</style><div style="width:300px;margin:20px"><label for=r>Volume</label><input id=r type=range min=0 max=100 step=1 value=10>
<label for=n>Note</label><input id=n></div>`,
		`$("#r").rangeslider({ polyfill: false, onSlide: (pos, v) => { window.slid = v; } });`), TabOptions{})
	fillSliders(t, tab, Locator{Label: "Volume"}, `() => $("#r").val() === String(window.slid) ? window.slid : $("#r").val() + " vs " + window.slid`, "40", "73")
}

// Material's slider lays its range input, transparent, over the track and
// handle it draws in its shadow tree.
func TestSliderMaterialRangeInput(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, modulePage("/sl-md", litImports, `<div style="width:300px;margin:20px"><md-slider id=ms aria-label=Volume min=0 max=100 value=10></md-slider>
<label for=n>Note</label><input id=n></div>`, `import "@material/web/slider/slider.js";`), TabOptions{})
	fillSliders(t, tab, Locator{Role: "slider", Name: "Volume"}, `() => document.getElementById("ms").value`, "40", "73")
}
