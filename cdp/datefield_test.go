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

	"github.com/tranquil/automation/errcode"
)

// datefieldPage serves a page whose body holds <div data-datefield=…>
// elements, made into date fields (React Aria's and MUI X's), and <div
// data-select=…> ones, made into comboboxes, by the bundle `make tools`
// builds from testdata/datefield.
func datefieldPage(t *testing.T, path, body string) string {
	t.Helper()
	moreLibs(t, "react", "react-dom", "react-aria-components", "@mui/x-date-pickers")
	dir := filepath.Join(filepath.Dir(libsDir(t)), "bundles")
	if _, err := os.Stat(filepath.Join(dir, "datefield.bundle.js")); err != nil {
		t.Fatalf("the date field bundle is not built in %s; build it with: %s", dir, libsInstall)
	}
	pages.Once("/bundles/", http.StripPrefix("/bundles/", http.FileServer(http.Dir(dir))))
	return serve(path, `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'self' 'unsafe-inline'">`+
		`<title>date field</title>`+body+`<script type=module src="/bundles/datefield.bundle.js"></script>`)
}

// dateFields are the fields of the tests: each implementation in a
// locale that puts the month first and in one that puts the day first.
// input is the field's form input and layout how it holds the date.
var dateFields = []struct{ kind, locale, order, input, layout string }{
	{"aria", "en-US", "month day year", "input[type=date]", "2006-01-02"},
	{"aria", "en-GB", "day month year", "input[type=date]", "2006-01-02"},
	{"mui", "en", "month day year", "input", "01/02/2006"},
	{"mui", "de", "day month year", "input", "02.01.2006"},
}

// TestDateFieldFill fills each field from an ISO date, by its label (which
// names each segment too: "day, Birth date") and by its group's role and
// name, and reads the date back from what the widget itself reported.
func TestDateFieldFill(t *testing.T) {
	body := ""
	for i, f := range dateFields {
		body += fmt.Sprintf(`<div data-datefield=%s data-locale=%s data-label="Date %d"></div>`, f.kind, f.locale, i)
	}
	tab := newTabWith(t, datefieldPage(t, "/df-fill", body), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	for i, f := range dateFields {
		t.Run(f.kind+" "+f.locale, func(t *testing.T) {
			label := fmt.Sprintf("Date %d", i)
			order := truth(t, tab, fmt.Sprintf(`() => Array.from(document.querySelectorAll("[data-datefield]")[%d].querySelectorAll("[role=spinbutton]"), (s) => s.getAttribute("aria-valuemax"))`, i))
			t.Logf("segments' maxima in the field's order: %s (%s)", order, f.order)
			for _, c := range []struct {
				loc  Locator
				want string
			}{
				{Locator{Label: label}, "2024-03-07"},
				{Locator{Role: "group", Name: label}, "1999-12-31"},
				{Locator{Label: label}, "2031-01-02"},
			} {
				st, err := tab.Fill(ctx, c.loc, c.want, FormOptions{})
				if err != nil {
					t.Fatalf("fill %v with %s: %v", c.loc, c.want, err)
				}
				if st.Value != c.want {
					t.Errorf("fill %v read back %q, want %s", c.loc, st.Value, c.want)
				}
				if got := truth(t, tab, fmt.Sprintf(`() => window.dateValues[%q]`, label)); got != fmt.Sprintf("%q", c.want) {
					t.Errorf("after fill %s the widget reported %s", c.want, got)
				}
				if v, err := tab.Value(ctx, c.loc); err != nil || v != c.want {
					t.Errorf("the value reader says %q, %v", v, err)
				}
				day, _ := time.Parse("2006-01-02", c.want)
				in := truth(t, tab, fmt.Sprintf(`() => document.querySelectorAll("[data-datefield]")[%d].querySelector(%q).value`, i, f.input))
				if want := fmt.Sprintf("%q", day.Format(f.layout)); in != want {
					t.Errorf("after fill %s the field's input holds %s, want %s", c.want, in, want)
				}
			}
		})
	}
}

// TestDateFieldRefused: a value that is no ISO date, or no date there
// is, or not the field's kind, is invalid before any key is sent (the
// field keeps what it held); a date before the field's minimum is kept
// and reported invalid, as the widget deems it.
func TestDateFieldRefused(t *testing.T) {
	tab := newTabWith(t, datefieldPage(t, "/df-refused", `<div data-datefield=aria data-locale=en-US data-label="Aria date" data-min=2000-01-01></div>`+
		`<div data-datefield=mui data-locale=en data-label="MUI date" data-min=2000-01-01></div>`), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	for _, label := range []string{"Aria date", "MUI date"} {
		t.Run(label, func(t *testing.T) {
			loc := Locator{Label: label}
			if _, err := tab.Fill(ctx, loc, "2024-03-07", FormOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"03/07/2024", "2024-02-30", "2024-03-07T10:30", "10:30", "tomorrow", "", "0000-03-07"} {
				_, err := tab.Fill(ctx, loc, v, FormOptions{})
				if !errors.Is(err, errcode.Invalid) {
					t.Errorf("fill %q: %v, want invalid", v, err)
				}
			}
			if got := truth(t, tab, fmt.Sprintf(`() => window.dateValues[%q]`, label)); got != `"2024-03-07"` {
				t.Errorf("after the refused values the widget holds %s", got)
			}
			st, err := tab.Fill(ctx, loc, "1999-12-31", FormOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !st.Invalid || st.Value != "1999-12-31" {
				t.Errorf("a date before the minimum reads %+v, want it kept and invalid", st)
			}
			t.Logf("before the minimum: %+v", st)
			if st, err = tab.Fill(ctx, loc, "2000-01-01", FormOptions{}); err != nil || st.Invalid {
				t.Errorf("the minimum itself: %+v, %v", st, err)
			}
		})
	}
}

// TestDateFieldTime fills time fields, 24-hour ones and a 12-hour one
// whose AM/PM segment is typed too, and date and time fields.
func TestDateFieldTime(t *testing.T) {
	tab := newTabWith(t, datefieldPage(t, "/df-time", `<div data-datefield=aria data-locale=en-GB data-label="Aria 24" data-time></div>`+
		`<div data-datefield=aria data-locale=en-US data-label="Aria 12" data-time></div>`+
		`<div data-datefield=mui data-locale=en-gb data-label="MUI 24" data-time></div>`+
		`<div data-datefield=aria data-locale=en-US data-label="Aria when" data-datetime></div>`+
		`<div data-datefield=mui data-locale=de data-label="MUI when" data-datetime></div>`), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	values := map[bool][]string{false: {"14:05", "09:30", "00:00", "12:45"}, true: {"2024-03-07T14:05", "1999-12-31T00:30"}}
	for _, label := range []string{"Aria 24", "Aria 12", "MUI 24", "Aria when", "MUI when"} {
		t.Run(label, func(t *testing.T) {
			for _, want := range values[strings.HasSuffix(label, "when")] {
				st, err := tab.Fill(ctx, Locator{Label: label}, want, FormOptions{})
				if err != nil {
					t.Fatalf("fill %s: %v", want, err)
				}
				if got := truth(t, tab, fmt.Sprintf(`() => window.dateValues[%q]`, label)); got != fmt.Sprintf("%q", want) {
					t.Errorf("after fill %s the widget reported %s", want, got)
				}
				if st.Value != want {
					t.Errorf("fill %s read back %q", want, st.Value)
				}
			}
		})
	}
}

// A field of the page's own making that corrects what is typed (it keeps
// years up to 2030) and one that is read-only: fill says so.
func TestDateFieldNotCommitted(t *testing.T) {
	tab := newTabWith(t, serve("/df-corrects", `<!doctype html><title>own field</title>
<span id=l>Due date</span>
<div role=group aria-labelledby=l id=g>
  <span role=spinbutton tabindex=0 aria-label=Year aria-valuemin=1 aria-valuemax=9999>yyyy</span>-<span role=spinbutton tabindex=0 aria-label=Month aria-valuemin=1 aria-valuemax=12>mm</span>-<span role=spinbutton tabindex=0 aria-label=Day aria-valuemin=1 aria-valuemax=31>dd</span>
</div>
<span id=l2>Fixed date</span>
<div role=group aria-labelledby=l2 aria-readonly=true>
  <span role=spinbutton tabindex=0 aria-label=Year aria-valuenow=2020>2020</span>-<span role=spinbutton tabindex=0 aria-label=Month aria-valuenow=1>01</span>-<span role=spinbutton tabindex=0 aria-label=Day aria-valuenow=1>01</span>
</div>
<script>
const g = document.getElementById("g");
let typed = "";
g.addEventListener("focusin", () => { typed = ""; });
g.addEventListener("keydown", (e) => {
  if (!/^[0-9]$/.test(e.key)) return;
  e.preventDefault();
  typed += e.key;
  e.target.setAttribute("aria-valuenow", String(Number(typed)));
  e.target.textContent = typed;
});
g.addEventListener("focusout", (e) => {
  if (g.contains(e.relatedTarget)) return;
  const y = g.querySelector("[aria-label=Year]");
  if (Number(y.getAttribute("aria-valuenow")) > 2030) { y.setAttribute("aria-valuenow", "2030"); y.textContent = "2030"; }
});
</script>`), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	st, err := tab.Fill(ctx, Locator{Label: "Due date"}, "2029-11-05", FormOptions{})
	if err != nil || st.Value != "2029-11-05" {
		t.Fatalf("fill read back %+v, %v", st, err)
	}
	_, err = tab.Fill(ctx, Locator{Label: "Due date"}, "2031-01-02", FormOptions{})
	var nc *NotCommittedError
	if !errors.As(err, &nc) || nc.Kept != "2030-01-02" {
		t.Errorf("a corrected year: %v, want not committed, kept 2030-01-02", err)
	}
	if _, err := tab.Fill(ctx, Locator{Label: "Fixed date"}, "2024-03-07", FormOptions{}); !errors.Is(err, errcode.Readonly) {
		t.Errorf("a read-only field: %v", err)
	}
}
