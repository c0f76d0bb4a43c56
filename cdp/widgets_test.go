package cdp

import (
	"encoding/json"
	"testing"
	"time"
)

// Widgets that report their own role and state: form-associated custom
// elements whose role comes from ElementInternals, web components that
// re-render after a click, and dropdowns whose choice shows somewhere
// other than an inner node's text. Every page's truth is read from the
// widget itself, through the page.

// litImports maps the bare module names Lit components import to the
// copies served under /lib/.
var litImports = map[string]string{
	"lit": "lit/index.js", "lit/": "lit/", "lit-html": "lit-html/lit-html.js", "lit-html/": "lit-html/",
	"lit-element": "lit-element/index.js", "lit-element/": "lit-element/",
	"@lit/reactive-element": "@lit/reactive-element/reactive-element.js", "@lit/reactive-element/": "@lit/reactive-element/",
	"@lit/context": "@lit/context/index.js", "tslib": "tslib/tslib.es6.mjs", "@material/web/": "@material/web/",
}

var fluentImports = map[string]string{
	"@microsoft/fast-element":                   "@microsoft/fast-element/dist/esm/index.js",
	"@microsoft/fast-element/declarative.js":    "@microsoft/fast-element/dist/esm/declarative/index.js",
	"@microsoft/focusgroup-polyfill":            "@microsoft/focusgroup-polyfill/build/index.mjs",
	"@microsoft/focusgroup-polyfill/shadowless": "@microsoft/focusgroup-polyfill/build/index-shadowless.mjs",
	"@fluentui/tokens":                          "@fluentui/tokens/lib/index.js", "@fluentui/web-components/": "@fluentui/web-components/",
	"tslib": "tslib/tslib.es6.mjs",
}

// UI5's base package pins a Lit renderer older than the one Lit
// components use; its copy sits in the package's own node_modules.
var ui5Imports = map[string]string{
	"@ui5/webcomponents/": "@ui5/webcomponents/", "@ui5/webcomponents-base/": "@ui5/webcomponents-base/",
	"@ui5/webcomponents-icons/": "@ui5/webcomponents-icons/", "@ui5/webcomponents-theming/": "@ui5/webcomponents-theming/",
	"@ui5/webcomponents-localization/": "@ui5/webcomponents-localization/", "@sap-theming/": "@sap-theming/",
	"lit-html": "@ui5/webcomponents-base/node_modules/lit-html/lit-html.js", "lit-html/": "@ui5/webcomponents-base/node_modules/lit-html/",
	"@lit-labs/ssr-dom-shim":              "@lit-labs/ssr-dom-shim/index.js",
	"@ui5/webcomponents-base/jsx-runtime": "@ui5/webcomponents-base/dist/jsx-runtime.js",
}

// modulePage serves a page whose module script imports packages from
// /lib/ by their bare names, through an import map.
func modulePage(path string, imports map[string]string, body, module string) string {
	m := map[string]string{}
	for k, v := range imports {
		m[k] = "/lib/" + v
	}
	im, _ := json.Marshal(map[string]any{"imports": m})
	html := `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'self' 'unsafe-inline'">` +
		`<title>widgets</title><script type=importmap>` + string(im) + `</script>` + body +
		`<script type=module>` + module + `</script>`
	return serve(path, html)
}

// truth reads what the page itself holds.
func truth(t *testing.T, tab *Tab, fn string) string {
	t.Helper()
	v, err := tab.Evaluate(tctx(t, 10*time.Second), fn)
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// checkBoth checks and unchecks a box twice over (the second time it is
// already in the state asked for), reading the widget's own state after
// each.
func checkBoth(t *testing.T, tab *Tab, loc Locator, state string) {
	t.Helper()
	ctx := tctx(t, 30*time.Second)
	for _, want := range []bool{true, true, false, false, true} {
		if err := tab.Check(ctx, loc, want, FormOptions{}); err != nil {
			t.Fatalf("check %v: %v", want, err)
		}
		if got := truth(t, tab, state); got != map[bool]string{true: "true", false: "false"}[want] {
			t.Fatalf("after check %v the widget holds %s", want, got)
		}
		// The reader says what the widget holds too.
		if got, err := tab.Checked(ctx, loc); err != nil || got != want {
			t.Fatalf("after check %v the reader says %v, %v", want, got, err)
		}
	}
}

func TestWidgetFluentCheckbox(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, modulePage("/w-fluent", fluentImports, `<fluent-checkbox id=fc></fluent-checkbox><label for=fc>Subscribe</label>`,
		`import "@fluentui/web-components/dist/esm/checkbox/define.js";
import { setTheme } from "@fluentui/web-components/dist/esm/theme/set-theme.js";
import { webLightTheme } from "@fluentui/tokens";
setTheme(webLightTheme);`), TabOptions{})
	checkBoth(t, tab, Locator{Role: "checkbox", Name: "Subscribe"}, `() => document.getElementById("fc").checked`)
}

func TestWidgetIonicCheckbox(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/w-ion", []string{"@ionic/core/css/ionic.bundle.css", "module:@ionic/core/dist/ionic/ionic.esm.js"},
		`<ion-checkbox id=ic>Agree</ion-checkbox>`, ``), TabOptions{})
	checkBoth(t, tab, Locator{Role: "checkbox", Name: "Agree"}, `() => document.getElementById("ic").checked`)
}

func TestWidgetUI5Checkbox(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, modulePage("/w-ui5", ui5Imports, `<ui5-checkbox id=uc text="Remember me"></ui5-checkbox>`,
		`import "@ui5/webcomponents/dist/CheckBox.js";`), TabOptions{})
	checkBoth(t, tab, Locator{Role: "checkbox", Name: "Remember me"}, `() => document.getElementById("uc").checked`)
}

func TestWidgetMaterialSelect(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, modulePage("/w-md", litImports, `<md-outlined-select id=ms label="Fruit">
<md-select-option value=apple><div slot=headline>Apple</div></md-select-option>
<md-select-option value=banana><div slot=headline>Banana</div></md-select-option>
<md-select-option value=cherry><div slot=headline>Cherry</div></md-select-option></md-outlined-select>`,
		`import "@material/web/select/outlined-select.js"; import "@material/web/select/select-option.js";`), TabOptions{})
	chooseFruits(t, tab, "ms", 30*time.Second)
}

// chooseFruits selects Banana, Cherry and Apple in turn in the select
// labelled "Fruit", checking each against the value the element of id
// holds, within d.
func chooseFruits(t *testing.T, tab *Tab, id string, d time.Duration) {
	t.Helper()
	ctx := tctx(t, d)
	for _, c := range []struct{ label, value string }{{"Banana", "banana"}, {"Cherry", "cherry"}, {"Apple", "apple"}} {
		got, err := tab.Select(ctx, Locator{Label: "Fruit"}, c.label, FormOptions{})
		if err != nil {
			t.Fatalf("select %s: %v", c.label, err)
		}
		if got != c.label {
			t.Errorf("select %s read back %q", c.label, got)
		}
		if v := truth(t, tab, `() => document.getElementById("`+id+`").value`); v != `"`+c.value+`"` {
			t.Fatalf("after choosing %s the select holds %s", c.label, v)
		}
	}
}

func TestWidgetIntlTelCountry(t *testing.T) {
	libsDir(t)
	tab := newTabWith(t, libPage("/w-iti", []string{"intl-tel-input/dist/css/intlTelInput.css", "intl-tel-input/dist/js/intlTelInput.min.js"},
		`<label for=ph>Phone</label><input id=ph type=tel>`,
		`window.iti = intlTelInput(document.getElementById("ph"), { initialCountry: "gb", separateDialCode: true });`), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	for _, c := range []struct{ name, iso string }{{"France", "fr"}, {"Japan", "jp"}} {
		got, err := tab.Select(ctx, Locator{Role: "button", Name: "Change country"}, c.name, FormOptions{})
		if err != nil {
			t.Fatalf("choose %s: %v", c.name, err)
		}
		if v := truth(t, tab, `() => window.iti.getSelectedCountry().iso2`); v != `"`+c.iso+`"` {
			t.Fatalf("after choosing %s (read back %q) the widget holds %s", c.name, got, v)
		}
	}
}

func TestWidgetCustomElementInternals(t *testing.T) {
	tab := newTabWith(t, serve("/w-custom", customPage), TabOptions{})
	checkBoth(t, tab, Locator{Role: "checkbox", Name: "Agree to terms"}, `() => document.getElementById("agree").checked`)
	ctx := tctx(t, 30*time.Second)
	for _, c := range []struct{ label, id, value string }{{"Nickname", "nick", "ada"}, {"Nickname", "nick", "grace"}, {"City", "city", "Oslo"}, {"City", "city", ""}} {
		st, err := tab.Fill(ctx, Locator{Label: c.label}, c.value, FormOptions{})
		if err != nil {
			t.Fatalf("fill %s with %q: %v", c.label, c.value, err)
		}
		if st.Value != c.value {
			t.Errorf("fill %s read back %q", c.label, st.Value)
		}
		if v := truth(t, tab, `() => document.getElementById("`+c.id+`").value`); v != `"`+c.value+`"` {
			t.Fatalf("after filling %s with %q the field holds %s", c.label, c.value, v)
		}
	}
}

// customPage holds form-associated custom elements whose role and state
// come from ElementInternals only: a checkbox, and text fields typed into
// an inner input in an open or a closed shadow root.
const customPage = `<!doctype html><title>custom</title>
<style>x-check, x-text { display: inline-block; min-width: 120px; padding: 4px; border: 1px solid #888; }</style>
<p><x-check id=agree>Agree to terms</x-check></p>
<p><label for=nick>Nickname</label> <x-text id=nick></x-text></p>
<p><label for=city>City</label> <x-text id=city data-closed=1></x-text></p>
<script>
class XCheck extends HTMLElement {
  static formAssociated = true;
  #i = this.attachInternals();
  #on = false;
  constructor() { super(); this.#i.role = "checkbox"; this.#i.ariaChecked = "false"; this.addEventListener("click", () => { this.checked = !this.#on; }); }
  connectedCallback() { this.tabIndex = 0; }
  get checked() { return this.#on; }
  set checked(v) { this.#on = !!v; this.#i.ariaChecked = String(this.#on); this.#i.setFormValue(this.#on ? "on" : null); }
}
customElements.define("x-check", XCheck);
class XText extends HTMLElement {
  static formAssociated = true;
  #i = this.attachInternals();
  #in;
  constructor() {
    super();
    this.#i.role = "textbox";
    const root = this.attachShadow({ mode: this.dataset.closed ? "closed" : "open", delegatesFocus: true });
    this.#in = document.createElement("input");
    this.#in.style.cssText = "border: 0; outline: 0; width: 100%";
    this.#in.addEventListener("input", () => this.#i.setFormValue(this.#in.value));
    root.append(this.#in);
  }
  get value() { return this.#in.value; }
  set value(v) { this.#in.value = v; }
}
customElements.define("x-text", XText);
</script>`

// listPage holds two vanilla comboboxes (an input with role=combobox and
// a role=listbox popup). One lists its options only once something is
// typed, searching on keyup as older autocompletes do, after a delay as a
// server's answer would come. The other is a multi-select whose list,
// labelled by the field's label as the ARIA pattern has it, starts with a
// heading repeating that label and stays open after each pick.
const listPage = `<!doctype html><title>lists</title>
<style>[role=listbox] { border: 1px solid #999; margin: 0; padding: 0; list-style: none; width: 240px; }
[role=option], .head { padding: 4px; } [aria-selected=true] { background: #def; } .chips span { margin-right: 4px; }</style>
<p><label for=country>Country</label> <input id=country role=combobox aria-expanded=false aria-controls=country-list aria-autocomplete=list autocomplete=off></p>
<ul id=country-list role=listbox aria-label=Countries hidden></ul>
<p id=tops-label>Toppings</p>
<div class=multi><span class=chips id=chips></span>
<input id=tops role=combobox aria-labelledby=tops-label aria-expanded=false aria-controls=tops-list autocomplete=off></div>
<div id=tops-list role=listbox aria-multiselectable=true aria-labelledby=tops-label hidden><div class=head>Toppings</div>
<div role=option aria-selected=false>Cheese</div><div role=option aria-selected=false>Olives</div><div role=option aria-selected=false>Mushrooms</div></div>
<div style="height:400px"></div>
<script>
const countries = ["Norway", "North Macedonia", "Sweden", "Denmark", "Finland"];
const cin = document.getElementById("country"), clist = document.getElementById("country-list");
window.country = "";
let timer = 0;
cin.addEventListener("keyup", () => {
  clearTimeout(timer);
  clist.hidden = true; clist.replaceChildren(); cin.setAttribute("aria-expanded", "false");
  const q = cin.value.toLowerCase();
  if (!q) return;
  timer = setTimeout(() => {
    for (const c of countries.filter((c) => c.toLowerCase().includes(q))) {
      const li = document.createElement("li");
      li.setAttribute("role", "option"); li.textContent = c;
      li.addEventListener("click", () => { window.country = c; cin.value = c; clist.hidden = true; cin.setAttribute("aria-expanded", "false"); });
      clist.append(li);
    }
    clist.hidden = false; cin.setAttribute("aria-expanded", "true");
  }, 300);
});
const tin = document.getElementById("tops"), tlist = document.getElementById("tops-list"), chips = document.getElementById("chips");
window.toppings = [];
tin.addEventListener("click", () => { tlist.hidden = false; tin.setAttribute("aria-expanded", "true"); });
for (const o of tlist.querySelectorAll("[role=option]")) {
  o.addEventListener("click", () => {
    const on = o.getAttribute("aria-selected") !== "true";
    o.setAttribute("aria-selected", String(on));
    window.toppings = Array.from(tlist.querySelectorAll("[aria-selected=true]")).map((e) => e.textContent);
    chips.replaceChildren(...window.toppings.map((t) => Object.assign(document.createElement("span"), { textContent: t })));
    tin.focus();
  });
}
document.addEventListener("click", (e) => { if (!e.target.closest(".multi, #tops-list")) { tlist.hidden = true; tin.setAttribute("aria-expanded", "false"); } });
</script>`

func TestWidgetAsyncAutocomplete(t *testing.T) {
	tab := newTabWith(t, serve("/w-lists", listPage), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	for _, c := range []string{"Norway", "Finland"} {
		got, err := tab.Select(ctx, Locator{Label: "Country"}, c, FormOptions{})
		if err != nil {
			t.Fatalf("select %s: %v", c, err)
		}
		if got != c {
			t.Errorf("select %s read back %q", c, got)
		}
		if v := truth(t, tab, `() => window.country`); v != `"`+c+`"` {
			t.Fatalf("after choosing %s the page holds %s", c, v)
		}
	}
}

func TestWidgetMultiSelectLabelInList(t *testing.T) {
	tab := newTabWith(t, serve("/w-lists", listPage), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	for i, c := range []string{"Cheese", "Olives"} {
		got, err := tab.Select(ctx, Locator{Label: "Toppings"}, c, FormOptions{})
		if err != nil {
			t.Fatalf("select %s: %v", c, err)
		}
		want := []string{`"Cheese"`, `"Cheese, Olives"`}[i]
		if `"`+got+`"` != want {
			t.Errorf("select %s read back %q", c, got)
		}
		if v := truth(t, tab, `() => window.toppings.join(", ")`); v != want {
			t.Fatalf("after choosing %s the page holds %s", c, v)
		}
	}
}

// Ionic's select builds its list of choices only once opened, in one of
// four forms (an alert, a popover, an action sheet, a modal): it is
// opened, the choice clicked and the dialog confirmed as a person does,
// and read back from what the select then shows.
func TestWidgetIonicSelect(t *testing.T) {
	libsDir(t)
	for _, form := range []string{"alert", "popover", "action-sheet", "modal"} {
		t.Run(form, func(t *testing.T) {
			tab := newTabWith(t, libPage("/w-ion-select-"+form, []string{"@ionic/core/css/ionic.bundle.css", "module:@ionic/core/dist/ionic/ionic.esm.js"},
				`<ion-app><ion-content><ion-list><ion-item><ion-select id=is label="Fruit" interface="`+form+`" placeholder="Pick one">
<ion-select-option value=apple>Apple</ion-select-option><ion-select-option value=banana>Banana</ion-select-option>
<ion-select-option value=cherry>Cherry</ion-select-option></ion-select></ion-item></ion-list></ion-content></ion-app>`, ``), TabOptions{})
			chooseFruits(t, tab, "is", 60*time.Second)
		})
	}
}
