package cdp

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
	if _, err := os.Stat(filepath.Join(dir, "tom-select")); err != nil {
		t.Fatalf("the component libraries for the test pages are not installed in %s; install them with: %s", dir, libsInstall)
	}
	if _, loaded := registerOnce.LoadOrStore("/lib/", true); !loaded {
		files := http.StripPrefix("/lib/", http.FileServer(http.Dir(dir)))
		pages.Handle("/lib/", files)
	}
	return dir
}

// libPage serves a page that loads the given scripts and styles from /lib/
// and then runs setup.
func libPage(path string, assets []string, body, setup string) string {
	head := ""
	for _, a := range assets {
		if filepath.Ext(a) == ".css" {
			head += `<link rel=stylesheet href="/lib/` + a + `">`
		} else {
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
		got, err := tab.Select(ctx, Target{Label: "Fruit"}, "Banana", FormOptions{})
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
		st, err := tab.Fill(ctx, Target{Label: "Arrival"}, "2024-03-05", FormOptions{})
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
		_, err := tab.Fill(ctx, Target{Label: "Phone"}, "9991234567", FormOptions{})
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
