package cdp

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/testenv"
)

// The component libraries these tests build pages from come from npm,
// installed by `make tools` into .tools/testlibs, and are served here on
// loopback under /lib/. Every page gets a Content-Security-Policy that
// allows nothing but its own origin.
const libsInstall = "make tools (it runs npm install in .tools/testlibs)"

func libsDir(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".tools", "testlibs", "node_modules")
	if v := os.Getenv("TRANQUIL_TESTLIBS"); v != "" {
		dir = v
	}
	for _, pkg := range []string{"tom-select", "flatpickr", "imask", "choices.js", "select2", "jquery", "vue", "quill", "intl-tel-input", "@shoelace-style/shoelace",
		"@material/web", "@fluentui/web-components", "@microsoft/fast-element", "@ionic/core", "@ui5/webcomponents"} {
		if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); err != nil {
			t.Fatalf("the component library %s for the test pages is not installed in %s; install them with: %s", pkg, dir, libsInstall)
		}
	}
	pages.Once("/lib/", http.StripPrefix("/lib/", http.FileServer(http.Dir(dir))))
	return dir
}

// libPage serves a page that loads the given scripts and styles from /lib/
// and then runs setup.
func libPage(path string, assets []string, body, setup string) string {
	head := ""
	for _, a := range assets {
		switch {
		case filepath.Ext(a) == ".css":
			head += `<link rel=stylesheet href="/lib/` + a + `">`
		case strings.HasPrefix(a, "module:"):
			head += `<script type=module src="/lib/` + strings.TrimPrefix(a, "module:") + `"></script>`
		default:
			head += `<script src="/lib/` + a + `"></script>`
		}
	}
	html := `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'self' 'unsafe-inline'">` +
		`<title>lib</title>` + head + body + `<script>` + setup + `</script>`
	return serve(path, html)
}

func TestRealLibraryWidgets(t *testing.T) {
	libsDir(t)
	ctx := tctx(t, 90*time.Second)
	t.Run("Tom Select", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-tomselect", []string{"tom-select/dist/css/tom-select.css", "tom-select/dist/js/tom-select.complete.min.js"},
			`<label for=ts>Fruit</label><select id=ts><option value="">Pick one</option><option value=a>Apple</option><option value=b>Banana</option><option value=c>Cherry</option></select>`,
			`new TomSelect("#ts", {});`), TabOptions{})
		got, err := tab.Select(ctx, Locator{Label: "Fruit"}, "Banana", FormOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got != "Banana" {
			t.Errorf("select read back %q", got)
		}
		v, _ := tab.Evaluate(ctx, `() => document.getElementById("ts").value`)
		if string(v) != `"b"` {
			t.Errorf("the underlying select holds %s", v)
		}
	})
	t.Run("flatpickr", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-flatpickr", []string{"flatpickr/dist/flatpickr.min.css", "flatpickr/dist/flatpickr.min.js"},
			`<label for=d>Arrival</label><input id=d>`,
			`window.fp = flatpickr("#d", { allowInput: true });`), TabOptions{})
		st, err := tab.Fill(ctx, Locator{Label: "Arrival"}, "2024-03-05", FormOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Value != "2024-03-05" {
			t.Errorf("the field holds %q", st.Value)
		}
		v, _ := tab.Evaluate(ctx, `() => window.fp.selectedDates.length === 1 && window.fp.selectedDates[0].getDate()`)
		if string(v) != "5" {
			t.Errorf("flatpickr registered %s", v)
		}
	})
	t.Run("IMask", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-imask", []string{"imask/dist/imask.min.js"},
			`<label for=p>Phone</label><input id=p>`,
			`window.mask = IMask(document.getElementById("p"), { mask: "+{7}(000)000-00-00" });`), TabOptions{})
		_, err := tab.Fill(ctx, Locator{Label: "Phone"}, "9991234567", FormOptions{})
		var nc *NotCommittedError
		if !errors.As(err, &nc) {
			t.Fatalf("a mask reformats what is typed, which fill reports: %v", err)
		}
		if nc.Kept != "+7(999)123-45-67" {
			t.Errorf("the mask kept %q", nc.Kept)
		}
		v, _ := tab.Evaluate(ctx, `() => window.mask.unmaskedValue`)
		if string(v) != fmt.Sprintf("%q", "79991234567") {
			t.Errorf("the mask registered %s", v)
		}
	})
}

// More real libraries: a plain-JavaScript combobox, a jQuery one, a Vue
// form, a rich-text editor, a phone field with a country picker, and web
// components whose fields live in shadow roots.
func TestRealLibraryWidgetsMore(t *testing.T) {
	libsDir(t)
	eval := func(t *testing.T, tab *Tab, fn string) string {
		t.Helper()
		v, err := tab.Evaluate(tctx(t, 10*time.Second), fn)
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	t.Run("Choices.js", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-choices", []string{"choices.js/public/assets/styles/choices.min.css", "choices.js/public/assets/scripts/choices.min.js"},
			`<label for=c>Colour</label><select id=c><option value="">Pick</option><option value=r>Red</option><option value=g>Green</option><option value=b>Blue</option></select>`,
			`window.choices = new Choices("#c", { shouldSort: false });`), TabOptions{})
		ctx := tctx(t, 30*time.Second)
		for _, want := range []string{"Green", "Blue", "Red"} {
			got, err := tab.Select(ctx, Locator{Label: "Colour"}, want, FormOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("select read back %q, want %q", got, want)
			}
			if v := eval(t, tab, `() => window.choices.getValue(true)`); v != fmt.Sprintf("%q", strings.ToLower(want[:1])) {
				t.Errorf("Choices holds %s after choosing %s", v, want)
			}
		}
	})
	t.Run("Select2", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-select2", []string{"select2/dist/css/select2.min.css", "jquery/dist/jquery.min.js", "select2/dist/js/select2.min.js"},
			`<label for=s>City</label><select id=s style="width:200px"><option value=par>Paris</option><option value=ber>Berlin</option><option value=rom>Rome</option></select>`,
			`$("#s").select2();`), TabOptions{})
		ctx := tctx(t, 30*time.Second)
		got, err := tab.Select(ctx, Locator{Label: "City"}, "Berlin", FormOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got != "Berlin" {
			t.Errorf("select read back %q", got)
		}
		if v := eval(t, tab, `() => $("#s").val()`); v != `"ber"` {
			t.Errorf("the select holds %s", v)
		}
	})
	t.Run("Vue", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-vue", []string{"vue/dist/vue.runtime.global.prod.js"}, `<div id=app></div>`, `
const { createApp, h, reactive, withDirectives, vModelText, vModelCheckbox, vModelSelect } = Vue;
window.state = reactive({ name: "", agree: false, plan: "free" });
createApp({ render: () => h("form", [
  h("label", ["Your name ", withDirectives(h("input", { "onUpdate:modelValue": (v) => (state.name = v) }), [[vModelText, state.name]])]),
  h("label", [withDirectives(h("input", { type: "checkbox", "onUpdate:modelValue": (v) => (state.agree = v) }), [[vModelCheckbox, state.agree]]), " I agree"]),
  h("label", ["Plan ", withDirectives(h("select", { "onUpdate:modelValue": (v) => (state.plan = v) },
    [h("option", { value: "free" }, "Free"), h("option", { value: "pro" }, "Pro")]), [[vModelSelect, state.plan]])]),
  h("p", { id: "echo" }, state.name + "/" + state.agree + "/" + state.plan),
]) }).mount("#app");`), TabOptions{})
		ctx := tctx(t, 30*time.Second)
		if _, err := tab.Fill(ctx, Locator{Label: "Your name"}, "Ada", FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := tab.Check(ctx, Locator{Label: "I agree"}, true, FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := tab.Select(ctx, Locator{Label: "Plan"}, "Pro", FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if v := eval(t, tab, `() => [state.name, state.agree, state.plan]`); v != `["Ada",true,"pro"]` {
			t.Errorf("Vue's state is %s", v)
		}
		if s, err := tab.Text(ctx, Locator{Selector: "#echo"}); err != nil || s != "Ada/true/pro" {
			t.Errorf("the page shows %q (%v)", s, err)
		}
	})
	t.Run("Quill", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-quill", []string{"quill/dist/quill.snow.css", "quill/dist/quill.js"},
			`<div id=editor></div>`, `window.quill = new Quill("#editor", { theme: "snow" });
document.querySelector(".ql-editor").setAttribute("aria-label", "Message");`), TabOptions{})
		ctx := tctx(t, 30*time.Second)
		if _, err := tab.Fill(ctx, Locator{Label: "Message"}, "Hello from a script", FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if v := eval(t, tab, `() => window.quill.getText()`); v != `"Hello from a script\n"` {
			t.Errorf("Quill holds %s", v)
		}
	})
	t.Run("intl-tel-input", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-iti", []string{"intl-tel-input/dist/css/intlTelInput.css", "intl-tel-input/dist/js/intlTelInput.min.js"},
			`<label for=ph>Phone</label><input id=ph type=tel>`,
			`window.iti = intlTelInput(document.getElementById("ph"), { initialCountry: "gb" });`), TabOptions{})
		ctx := tctx(t, 30*time.Second)
		if _, err := tab.Fill(ctx, Locator{Label: "Phone"}, "7400 123456", FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if v := eval(t, tab, `() => [window.iti.getSelectedCountry().iso2, document.getElementById("ph").value]`); v != `["gb","7400 123456"]` {
			t.Errorf("the phone field holds %s", v)
		}
	})
	t.Run("Shoelace", func(t *testing.T) {
		tab := newTabWith(t, libPage("/lib-shoelace", []string{"@shoelace-style/shoelace/cdn/themes/light.css", "module:@shoelace-style/shoelace/cdn/shoelace-autoloader.js"},
			`<sl-input id=em label="Email"></sl-input>
<sl-checkbox id=nl>Newsletter</sl-checkbox>
<sl-select id=sz label="Size"><sl-option value=s>Small</sl-option><sl-option value=m>Medium</sl-option><sl-option value=l>Large</sl-option></sl-select>
<sl-button id=go>Send</sl-button><p id=sent></p>`,
			`document.getElementById("go").addEventListener("click", () => { document.getElementById("sent").textContent = "sent"; });`), TabOptions{})
		ctx := tctx(t, 30*time.Second)
		if _, err := tab.Fill(ctx, Locator{Label: "Email"}, "ada@example.com", FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := tab.Check(ctx, Locator{Role: "checkbox", Name: "Newsletter"}, true, FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := tab.Select(ctx, Locator{Role: "combobox", Name: "Size"}, "Medium", FormOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := tab.ClickElement(ctx, Locator{Role: "button", Name: "Send"}, FormOptions{}); err != nil {
			t.Fatal(err)
		}
		v := eval(t, tab, `() => [document.getElementById("em").value, document.getElementById("nl").checked, document.getElementById("sz").value, document.getElementById("sent").textContent]`)
		if v != `["ada@example.com",true,"m","sent"]` {
			t.Errorf("the components hold %s", v)
		}
	})
}
