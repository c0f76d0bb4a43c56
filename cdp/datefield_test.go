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
	// The build copies its source beside the bundle: a bundle of another
	// source mounts other fields than the tests expect.
	built, err := os.ReadFile(filepath.Join(dir, "datefield.js"))
	src, err2 := os.ReadFile(filepath.Join("testdata", "datefield", "datefield.js"))
	if err != nil || err2 != nil || string(built) != string(src) {
		t.Fatalf("the date field bundle in %s is not built from testdata/datefield/datefield.js (%v, %v); rebuild it with: %s", dir, err, err2, libsInstall)
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

// ownSegmentKeys makes the segments of a page's own field #g take
// digits: each shows, and holds as its aria-valuenow, the digits typed
// into it since focus came into the field.
const ownSegmentKeys = `const g = document.getElementById("g");
let typed = "";
g.addEventListener("focusin", () => { typed = ""; });
g.addEventListener("keydown", (e) => {
  if (!/^[0-9]$/.test(e.key)) return;
  e.preventDefault();
  typed += e.key;
  e.target.setAttribute("aria-valuenow", String(Number(typed)));
  e.target.textContent = typed;
});
`

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
<script>`+ownSegmentKeys+`
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

// TestDateFieldMonth fills fields of a month and a year only (a card's
// expiry) from ISO "YYYY-MM": MUI X's DateField as "MM/YYYY" and as
// "MM/YY" (two digits of the year), and a native month input; the truth
// is what each widget itself holds (MUI's onChange, the input's value).
// A whole date, a month the year lacks, a year two digits cannot stand
// for, or a month for a field of whole dates, is invalid before any key
// (the native input, given it, keeps none: not committed).
func TestDateFieldMonth(t *testing.T) {
	tab := newTabWith(t, datefieldPage(t, "/df-month", `<div data-datefield=mui data-month data-label="Valid thru"></div>`+
		`<div data-datefield=mui data-month data-format="MM/YY" data-label="Card expiry"></div>`+
		`<label>Native month <input type=month id=native></label>`+
		`<div data-datefield=mui data-locale=en data-label="Whole date"></div>`), TabOptions{})
	ctx := tctx(t, 90*time.Second)
	widget := map[string]string{
		"Valid thru":   `() => window.dateValues["Valid thru"]`,
		"Card expiry":  `() => window.dateValues["Card expiry"]`,
		"Native month": `() => document.getElementById("native").value`,
	}
	for _, label := range []string{"Valid thru", "Card expiry", "Native month"} {
		t.Run(label, func(t *testing.T) {
			for _, c := range []struct {
				loc  Locator
				want string
			}{
				{Locator{Label: label}, "2027-03"},
				{Locator{Label: label}, "2031-12"},
				{Locator{Label: label, Exact: true}, "2026-01"},
			} {
				st, err := tab.Fill(ctx, c.loc, c.want, FormOptions{})
				if err != nil {
					t.Fatalf("fill %v with %s: %v", c.loc, c.want, err)
				}
				if st.Value != c.want {
					t.Errorf("fill %s read back %q", c.want, st.Value)
				}
				if got := truth(t, tab, widget[label]); got != fmt.Sprintf("%q", c.want) {
					t.Errorf("after fill %s the widget holds %s", c.want, got)
				}
				if v, err := tab.Value(ctx, c.loc); err != nil || v != c.want {
					t.Errorf("the value reader says %q, %v", v, err)
				}
			}
			refused := []string{"2027-03-15", "2027-13", "03/27", "2027"}
			if label != "Native month" {
				refused = append(refused, "") // a native input takes "" as clearing it
			}
			if label == "Card expiry" {
				refused = append(refused, "1970-03", "2099-03")
			}
			for _, v := range refused {
				_, err := tab.Fill(ctx, Locator{Label: label}, v, FormOptions{})
				want := errcode.Invalid
				if label == "Native month" {
					// A picker input is given the value as its picker
					// would, and does not keep it (see Fill).
					want = errcode.NotCommitted
				}
				if !errors.Is(err, want) {
					t.Errorf("fill %q: %v, want %s", v, err, want)
				}
			}
			if got := truth(t, tab, widget[label]); label != "Native month" && got != `"2026-01"` {
				t.Errorf("after the refused values the widget holds %s", got)
			}
		})
	}
	if _, err := tab.Fill(ctx, Locator{Label: "Whole date"}, "2027-03", FormOptions{}); !errors.Is(err, errcode.Invalid) {
		t.Errorf("a month for a field of whole dates: %v, want invalid", err)
	}
	if _, err := tab.Fill(ctx, Locator{Role: "group", Name: "Card expiry"}, "2030-07", FormOptions{}); err != nil {
		t.Errorf("by the group's role and name: %v", err)
	}
	if got := truth(t, tab, widget["Card expiry"]); got != `"2030-07"` {
		t.Errorf("by the group's role and name the widget holds %s", got)
	}
}

// segmentKeys for fields of a month and a year: the keys for each
// segment, two digits for a two-digit year within fifty years of this
// one, and the value the field must then hold; what such a field cannot
// take is an error before any key.
func TestSegmentKeysMonth(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	month := segment{Part: "month", Min: f(1), Max: f(12)}
	year4 := segment{Part: "year", Min: f(0), Max: f(9999)}
	year2 := segment{Part: "year", Min: f(0), Max: f(99)}
	now := time.Now().Year()
	for _, c := range []struct {
		segs  []segment
		value string
		keys  string
		want  string
	}{
		{[]segment{month, year4}, "2027-03", "03 2027", "2027-03"},
		{[]segment{year4, month}, " 1999-12 ", "1999 12", "1999-12"},
		{[]segment{month, year2}, "2027-03", "03 27", "2027-03"},
		{[]segment{month, year2}, fmt.Sprintf("%d-01", now-50), fmt.Sprintf("01 %02d", (now-50)%100), fmt.Sprintf("%d-01", now-50)},
		{[]segment{month, year2}, fmt.Sprintf("%d-01", now+49), fmt.Sprintf("01 %02d", (now+49)%100), fmt.Sprintf("%d-01", now+49)},
	} {
		keys, want, err := segmentKeys(c.segs, c.value)
		if err != nil || strings.Join(keys, " ") != c.keys || want != c.want {
			t.Errorf("%q: keys %q, holds %q, %v; want keys %q, holds %q", c.value, keys, want, err, c.keys, c.want)
		}
	}
	for _, c := range []struct {
		segs  []segment
		value string
	}{
		{[]segment{month, year4}, "2027-03-15"},
		{[]segment{month, year4}, "2027-13"},
		{[]segment{month, year4}, "03/2027"},
		{[]segment{month, year4}, "2027-03T10:00"},
		{[]segment{month, year2}, fmt.Sprintf("%d-01", now-51)},
		{[]segment{month, year2}, fmt.Sprintf("%d-01", now+50)},
		{[]segment{{Part: "day", Max: f(31)}, month, year4}, "2027-03"},
	} {
		if _, _, err := segmentKeys(c.segs, c.value); err == nil {
			t.Errorf("%q into %+v: no error", c.value, c.segs)
		}
	}
	for yy, want := range map[int]int{now % 100: now, (now - 50) % 100: now - 50, (now + 49) % 100: now + 49} {
		if got := fullYear(yy, now); got != want {
			t.Errorf("fullYear(%d, %d) = %d, want %d", yy, now, got, want)
		}
	}
}

// A month and year field of the page's own making whose segments say
// nothing of their parts but their ranges (1-12, 0-99): the one of 12 is
// the month, as the field has a year, and the year is two digits.
func TestDateFieldMonthByRange(t *testing.T) {
	tab := newTabWith(t, serve("/df-month-range", `<!doctype html><title>own expiry</title>
<span id=l>Expires</span>
<div role=group aria-labelledby=l id=g>
  <span role=spinbutton tabindex=0 aria-valuemin=1 aria-valuemax=12>mm</span>/<span role=spinbutton tabindex=0 aria-valuemin=0 aria-valuemax=99>yy</span>
</div>
<script>`+ownSegmentKeys+`</script>`), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	st, err := tab.Fill(ctx, Locator{Role: "group", Name: "Expires"}, "2029-11", FormOptions{})
	if err != nil || st.Value != "2029-11" {
		t.Fatalf("fill: %+v, %v", st, err)
	}
	if got := truth(t, tab, `() => Array.from(document.querySelectorAll("[role=spinbutton]"), (s) => s.getAttribute("aria-valuenow")).join(" ")`); got != `"11 29"` {
		t.Errorf("the segments hold %s", got)
	}
}
