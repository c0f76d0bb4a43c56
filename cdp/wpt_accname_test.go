package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/testenv"
)

// The accessible-name suite of web-platform-tests (testdata/wpt-accname,
// see its README) run through the public lookup: every element that
// carries data-expectedlabel, and every element a manual page's ATTAcomm
// steps give a name, is looked up as a script would write it, {role: the
// word for the role Chromium's tree gives it (textbox for the date and
// time fields), name: the expected name, exact: true}, and the element
// found must be that element.

// wptMinResolved is the floor of cases resolved to the intended element:
// the figure measured when the test was last changed (569 of the 660
// named cases, where Chromium's own tree names 575 as WPT expects; the
// six between are elements without a box, which the runtime passes over
// as hidden). A change that loses a case fails here.
const wptMinResolved = 569

// wptKnownWrong are the cases whose lookup answers with another element,
// by page and test name, with the reason: a wrong answer outside this list
// fails the test, and so does one of these once it is right.
var wptKnownWrong = map[string]string{}

// wptCaseAttr marks each case element with its number, so that the element
// a lookup finds can be told apart from the one it was meant to find.
const wptCaseAttr = "data-tq-case"

// wptPlaceholder is the expectation of cases whose name the spec leaves
// open (comp_content_visibility): there is no name to look for.
const wptPlaceholder = "SPEC_AMBIGUOUS_LOG_VALUE"

// Outcomes of one case. resolved-other, not_found, ambiguous (no Nth
// reaches it) and error are ours; the others are the page's or Chromium's
// doing.
const (
	wptResolved = "resolved"     // the lookup found the intended element
	wptNth      = "resolved-nth" // several share role and name; Nth picked it
	// wptOther: the lookup answered with one element, another than the
	// intended one, which has the same role and name in the tree: a wrong
	// answer.
	wptOther = "resolved-other"
	// wptOtherUsable: as wptOther, but the lookup saw the intended
	// element and passed it over as hidden (no box) or disabled, leaving
	// one usable match: what an action needs.
	wptOtherUsable = "resolved-other-usable"
	wptAmbiguous   = "ambiguous" // several usable elements share role and name
	wptNotFound    = "not_found" // the tree has it with that role and name, the lookup did not find it
	wptHidden      = "hidden"    // the tree leaves the element out: no role, no name to find it by
	// wptTreeName: Chromium's tree names the element otherwise than WPT
	// expects, so a lookup by WPT's name must not find it.
	wptTreeName = "tree-name-differs"
	wptUnusable = "unusable" // exposed, but the lookup passes it over (hidden or disabled to the runtime)
	wptError    = "error"
	// Not counted: no name to look up.
	wptUnnamed     = "unnamed"
	wptUnspecified = "unspecified"
)

// wptCase is one element of the suite.
type wptCase struct {
	File     string `json:"file"`
	URL      string `json:"url"`
	ID       string `json:"id"` // its wptCaseAttr
	Expected string `json:"name"`
	Role     string `json:"role"` // the script word for TreeRole
	Test     string `json:"-"`
	TreeRole string `json:"-"`
	TreeName string `json:"-"`
	Outcome  string `json:"-"`
	Detail   string `json:"-"`
}

// counted reports whether the case has a name to look up: cases that
// expect no name ("" or the spec's placeholder) are not lookups by name
// (a {role} target without one matches every element of the role), so
// they stay out of the figure; the test logs an expected-"" element the
// tree gives a name.
func (c wptCase) counted() bool { return c.Outcome != wptUnnamed && c.Outcome != wptUnspecified }

// wptStandIns are what the pages load of WPT's harness: nothing runs, so
// each page runs only its own scripts (the shadow roots it attaches).
var wptStandIns = map[string]string{
	"/resources/testharness.js":        "",
	"/resources/testharnessreport.js":  "",
	"/resources/testdriver.js":         "",
	"/resources/testdriver-vendor.js":  "",
	"/resources/testdriver-actions.js": "",
	"/wai-aria/scripts/aria-utils.js":  "var AriaUtils = { verifyLabelsBySelector() {}, verifyRolesBySelector() {} };",
	// The manual pages call setup() and new ATTAcomm(…) inline.
	"/wai-aria/scripts/ATTAcomm.js": "function setup() {} function ATTAcomm() {}",
}

// wptManualStep is one expectation of a manual page: ATTAcomm's steps name
// an element by id and state its ATK name ("property", "name", "is", …);
// the other APIs' rows say the same.
type wptManualStep struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Test string `json:"test"`
}

// wptATTAcomm finds the JSON a manual page hands to new ATTAcomm.
var wptATTAcomm = regexp.MustCompile(`(?s)new ATTAcomm\(\s*(\{.*\})\s*\)\s*;`)

// manualSteps reads the name expectations of a manual page; a page that
// states none (a description test) has none.
func manualSteps(path string) ([]wptManualStep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := wptATTAcomm.FindSubmatch(data)
	if m == nil {
		return nil, fmt.Errorf("%s: no ATTAcomm steps", path)
	}
	var spec struct {
		Title string
		Steps []struct {
			Element string
			Title   string
			Test    struct {
				ATK [][]string
			}
		}
	}
	if err := json.Unmarshal(m[1], &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []wptManualStep
	for _, st := range spec.Steps {
		for _, a := range st.Test.ATK {
			if len(a) == 4 && a[0] == "property" && a[1] == "name" && a[2] == "is" {
				out = append(out, wptManualStep{ID: st.Element, Name: a[3], Test: spec.Title + ": " + st.Title})
			}
		}
	}
	return out, nil
}

// serveWPT serves the suite and the stand-ins, and returns the pages'
// paths below testdata/wpt-accname and their base URL.
func serveWPT(tb testing.TB) (files []string, base string) {
	tb.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "wpt-accname"))
	if err != nil {
		tb.Fatal(err)
	}
	size := map[string]int64{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".html") {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
			if fi, err := d.Info(); err == nil {
				size[files[len(files)-1]] = fi.Size()
			}
		}
		return err
	})
	if err != nil || len(files) == 0 {
		tb.Fatalf("the suite's pages: %v (%d)", err, len(files))
	}
	// The biggest pages take longest: they start first.
	sort.SliceStable(files, func(i, j int) bool { return size[files[i]] > size[files[j]] })
	for p, js := range wptStandIns {
		pages.Script(p, js)
	}
	pages.Dir("/wpt-accname/", dir)
	return files, site.URL + "/wpt-accname/"
}

// wptMark numbers the page's cases and describes them: the elements with
// data-expectedlabel, or a manual page's steps (an element by id that the
// page lacks is a case with no element, numbered -1).
const wptMark = `(attr, steps) => {
  const els = steps ? steps.map((s) => document.getElementById(s.id)) : Array.from(document.querySelectorAll("[data-expectedlabel]"));
  return els.map((el, i) => {
    if (!el) return { id: "-1", name: steps[i].name, test: steps[i].test };
    el.setAttribute(attr, String(i));
    if (steps) return { id: String(i), name: steps[i].name, test: steps[i].test };
    return { id: String(i), name: el.getAttribute("data-expectedlabel"), test: el.getAttribute("data-testname") || "" };
  });
}`

// runWPT looks up every case of the suite, a few pages at a time: each
// worker has a tab of its own and opens its pages in it one after another
// (a tab for each of the 160 pages costs more than the lookups).
func runWPT(ctx context.Context, tb testing.TB) []wptCase {
	tb.Helper()
	files, base := serveWPT(tb)
	results := make([][]wptCase, len(files))
	errs := make([]error, len(files))
	next := make(chan int, len(files))
	for i := range files {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tab *Tab
			defer func() {
				if tab != nil {
					cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
					defer cancel()
					_ = tab.Close(cctx)
				}
			}()
			for i := range next {
				f := files[i]
				var steps []wptManualStep
				if strings.HasPrefix(f, "manual/") {
					if steps, errs[i] = manualSteps(filepath.Join("testdata", "wpt-accname", f)); errs[i] != nil {
						continue
					}
				}
				if tab == nil {
					if tab, errs[i] = sharedConn.NewTabWith(ctx, base+f, TabOptions{}); errs[i] != nil {
						continue
					}
				} else if _, errs[i] = tab.Goto(ctx, base+f, Load); errs[i] != nil {
					continue
				}
				results[i], errs[i] = runWPTPage(ctx, tab, f, base+f, steps)
			}
		}()
	}
	wg.Wait()
	var all []wptCase
	for i, f := range files {
		if errs[i] != nil {
			tb.Fatalf("%s: %v", f, errs[i])
		}
		all = append(all, results[i]...)
	}
	return all
}

// runWPTPage looks up the cases of the page tab shows.
func runWPTPage(ctx context.Context, tab *Tab, file, url string, steps []wptManualStep) ([]wptCase, error) {
	raw, err := tab.Evaluate(ctx, wptMark, wptCaseAttr, steps)
	if err != nil {
		return nil, fmt.Errorf("mark: %w", err)
	}
	var marked []struct{ ID, Name, Test string }
	if err := json.Unmarshal(raw, &marked); err != nil {
		return nil, err
	}
	cases := make([]wptCase, len(marked))
	for i, m := range marked {
		cases[i] = wptCase{File: file, URL: url, ID: m.ID, Expected: m.Name, Test: m.Test}
		if m.ID == "-1" {
			cases[i].Outcome, cases[i].Detail = wptError, "the page has no element of the step's id"
		}
	}
	if err := treeOf(ctx, tab, cases); err != nil {
		return nil, err
	}
	walked := map[Locator]wptPicks{}
	for i := range cases {
		c := &cases[i]
		switch {
		case c.Expected == wptPlaceholder:
			c.Outcome = wptUnspecified
		case c.Expected == "":
			c.Outcome = wptUnnamed
		case c.Outcome == wptError:
		case c.Outcome == wptHidden:
			// The tree leaves the element out (display: none, inside an
			// aria-hidden or hidden label): it has no role or name a
			// script could find it by. It counts against the figure, as a
			// case no lookup of ours could resolve, and is not an error.
		default:
			c.Role = wptRoleWord(c.TreeRole)
			c.Outcome, c.Detail = lookUpWPT(ctx, tab, *c, walked)
			if normalizeSpace(c.TreeName) != normalizeSpace(c.Expected) {
				c.Detail = "the lookup: " + c.Outcome + " " + c.Detail
				c.Outcome = wptTreeName
			}
		}
	}
	return cases, nil
}

// treeOf reads each case element's role and name from Chromium's tree; an
// element the tree leaves out is hidden.
func treeOf(ctx context.Context, tab *Tab, cases []wptCase) error {
	c := tab.Client()
	const group = "wpt-accname"
	defer func() { _ = c.Runtime.ReleaseObjectGroup(ctx, runtime.NewReleaseObjectGroupArgs(group)) }()
	r, err := c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(
		`Array.from(document.querySelectorAll("[`+wptCaseAttr+`]"))`).SetObjectGroup(group))
	if err != nil {
		return err
	}
	if r.Result.ObjectID == nil {
		return errors.New("no list of case elements")
	}
	props, err := c.Runtime.GetProperties(ctx, runtime.NewGetPropertiesArgs(*r.Result.ObjectID).SetOwnProperties(true))
	if err != nil {
		return err
	}
	for _, p := range props.Result {
		var i int
		if _, err := fmt.Sscan(p.Name, &i); err != nil || i >= len(cases) || p.Value == nil || p.Value.ObjectID == nil {
			continue
		}
		pt, err := c.Accessibility.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().
			SetObjectID(*p.Value.ObjectID).SetFetchRelatives(false))
		if err != nil || len(pt.Nodes) == 0 || pt.Nodes[0].Ignored {
			cases[i].Outcome = wptHidden
			continue
		}
		cases[i].TreeRole, cases[i].TreeName = axString(pt.Nodes[0].Role), axString(pt.Nodes[0].Name)
	}
	return nil
}

// wptRoleWord is the role a script looks a case up by: the word for its
// tree role, but textbox for the date and time fields, as WPT and
// Playwright call them.
func wptRoleWord(treeRole string) string {
	if slices.Contains(alsoRoles["textbox"], treeRole) {
		return "textbox"
	}
	return roleWord(treeRole)
}

// lookUpWPT resolves one case as a script would and says what it found.
func lookUpWPT(ctx context.Context, tab *Tab, c wptCase, walked map[Locator]wptPicks) (outcome, detail string) {
	loc := Locator{Role: c.Role, Name: c.Expected, Exact: true}
	el, err := tab.Resolve(ctx, loc)
	var le *LocatorError
	switch {
	case err == nil:
		got, _, err := tab.Attribute(ctx, Locator{Ref: el.Ref}, wptCaseAttr)
		if err != nil {
			return wptError, err.Error()
		}
		if got != c.ID {
			if len(el.Skipped) > 0 {
				return wptOtherUsable, fmt.Sprintf("found %s (case %q), passed over %v", el.Element, got, el.Skipped)
			}
			return wptOther, fmt.Sprintf("found %s (case %q)", el.Element, got)
		}
		return wptResolved, ""
	case errors.As(err, &le) && le.Code == errcode.Ambiguous:
		return lookUpNth(ctx, tab, c, loc, le, walked)
	case errors.As(err, &le) && le.Code == errcode.NotFound:
		return wptNotFound, le.Message
	case errors.As(err, &le) && (le.Code == errcode.Hidden || le.Code == errcode.Disabled):
		return wptUnusable, string(le.Code) + ": " + le.Message
	}
	return wptError, err.Error()
}

// wptPicks is what Nth 0..Count-1 of one ambiguous target resolve to:
// the case number of each, or an error. Every case of the target is
// answered from it, so each target is walked once.
type wptPicks struct {
	ids    []string
	detail string // why the walk failed, or ""
}

// nthOf walks an ambiguous target the way a script would: Count says how
// many there are, Nth 0..Count-1 each resolve, and Nth Count does not.
func nthOf(ctx context.Context, tab *Tab, loc Locator, amb *LocatorError) wptPicks {
	n, err := tab.Count(ctx, loc)
	if err != nil {
		return wptPicks{detail: "count: " + err.Error()}
	}
	if n < len(amb.Candidates) {
		return wptPicks{detail: fmt.Sprintf("count %d, fewer than the %d usable matches", n, len(amb.Candidates))}
	}
	var p wptPicks
	for k := 0; k <= n; k++ {
		el, err := tab.Resolve(ctx, Locator{Role: loc.Role, Name: loc.Name, Exact: true, Nth: &k})
		switch {
		case k == n && err == nil:
			return wptPicks{detail: fmt.Sprintf("nth %d resolves past a count of %d", n, n)}
		case k == n:
			return p
		case err != nil:
			return wptPicks{detail: fmt.Sprintf("nth %d of %d: %v", k, n, err)}
		}
		got, _, err := tab.Attribute(ctx, Locator{Ref: el.Ref}, wptCaseAttr)
		if err != nil {
			return wptPicks{detail: err.Error()}
		}
		p.ids = append(p.ids, got)
	}
	return p
}

// lookUpNth answers an ambiguous case: resolved when some Nth of its
// target is the intended element.
func lookUpNth(ctx context.Context, tab *Tab, c wptCase, loc Locator, amb *LocatorError, walked map[Locator]wptPicks) (outcome, detail string) {
	p, ok := walked[loc]
	if !ok {
		p = nthOf(ctx, tab, loc, amb)
		walked[loc] = p
	}
	if p.detail != "" {
		return wptError, p.detail
	}
	for k, id := range p.ids {
		if id == c.ID {
			return wptNth, fmt.Sprintf("nth %d of %d", k, len(p.ids))
		}
	}
	return wptAmbiguous, fmt.Sprintf("%s; no nth of the %d is it", amb.Message, len(p.ids))
}

// wptTally counts outcomes of the counted cases, and the cases whose tree
// name is the expectation (Chromium's own figure; whitespace collapsed).
type wptTally struct {
	n, chromium int
	by          map[string]int
}

func tallyWPT(cases []wptCase) wptTally {
	t := wptTally{by: map[string]int{}}
	for _, c := range cases {
		t.by[c.Outcome]++
		if !c.counted() {
			continue
		}
		t.n++
		if c.Outcome != wptHidden && normalizeSpace(c.TreeName) == normalizeSpace(c.Expected) {
			t.chromium++
		}
	}
	return t
}

func (t wptTally) resolved() int { return t.by[wptResolved] + t.by[wptNth] }

// wptByPage lists, for each page with a named case left unresolved, its
// cases resolved, named, and named as expected by Chromium's tree.
func wptByPage(cases []wptCase) string {
	byFile := map[string][]wptCase{}
	for _, c := range cases {
		byFile[c.File] = append(byFile[c.File], c)
	}
	var files []string
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		t := tallyWPT(byFile[f])
		if t.resolved() < t.n {
			fmt.Fprintf(&b, "  %s: %d of %d (Chromium's tree %d)\n", f, t.resolved(), t.n, t.chromium)
		}
	}
	return b.String()
}

// report lists the cases not resolved, grouped by outcome.
func reportWPT(cases []wptCase) string {
	var b strings.Builder
	byOutcome := map[string][]wptCase{}
	for _, c := range cases {
		if c.counted() && c.Outcome != wptResolved && c.Outcome != wptNth {
			byOutcome[c.Outcome] = append(byOutcome[c.Outcome], c)
		}
	}
	var outcomes []string
	for o := range byOutcome {
		outcomes = append(outcomes, o)
	}
	sort.Strings(outcomes)
	for _, o := range outcomes {
		fmt.Fprintf(&b, "%s (%d):\n", o, len(byOutcome[o]))
		for _, c := range byOutcome[o] {
			fmt.Fprintf(&b, "  %s #%s %q: role %q (tree %q) name %q, tree name %q; %s\n",
				c.File, c.ID, c.Test, c.Role, c.TreeRole, c.Expected, c.TreeName, c.Detail)
		}
	}
	return b.String()
}

func TestWPTAccname(t *testing.T) {
	// About 30 s on a quiet machine; beside the runner package's tests
	// in make test, four times that and more: the bound is for a hang.
	ctx := tctx(t, 5*time.Minute)
	start := time.Now()
	cases := runWPT(ctx, t)
	tally := tallyWPT(cases)
	t.Logf("WPT accname: %d of %d named cases resolved to the intended element (%d through Nth); "+
		"Chromium's tree names %d of them as expected; outcomes %v; %d cases expect no name; %v",
		tally.resolved(), tally.n, tally.by[wptNth], tally.chromium, tally.by, tally.by[wptUnnamed]+tally.by[wptUnspecified], time.Since(start).Round(time.Millisecond))
	t.Logf("not resolved:\n%s", reportWPT(cases))
	for _, c := range cases {
		key := c.File + ": " + c.Test
		switch {
		case c.Outcome == wptOther && wptKnownWrong[key] == "":
			t.Errorf("%s #%s: {role: %q, name: %q} %s, not the intended element", c.File, c.ID, c.Role, c.Expected, c.Detail)
		case c.Outcome != wptOther && wptKnownWrong[key] != "":
			t.Errorf("%s #%s is no longer a wrong answer (%s): take it off wptKnownWrong", c.File, c.ID, c.Outcome)
		}
	}
	if tally.resolved() < wptMinResolved {
		t.Errorf("%d cases resolved, fewer than the %d this suite resolved before; by page:\n%s", tally.resolved(), wptMinResolved, wptByPage(cases))
	}
	for _, c := range cases {
		// An element that expects no name gets none from the tree.
		if c.Outcome == wptUnnamed && c.TreeName != "" {
			t.Logf("%s #%s %q: the tree names it %q where WPT expects none", c.File, c.ID, c.Test, c.TreeName)
		}
	}
}

// BenchmarkWPTAccname puts our figure on the suite beside Playwright's
// getByRole on the same cases in the same Chromium (bench/browser's
// accname.mjs; its run installs Playwright). Each iteration runs both.
func BenchmarkWPTAccname(b *testing.B) {
	peers := testenv.BrowserPeers(b, "playwright-core")
	chromium, err := testenv.LookChromium()
	if err != nil {
		b.Fatalf("chromium: %v (install with: %s)", err, testenv.ChromiumInstall)
	}
	ctx := b.Context()
	var ours, theirs wptTally
	for b.Loop() {
		cases := runWPT(ctx, b)
		ours = tallyWPT(cases)
		var named []wptCase
		for _, c := range cases {
			if c.counted() {
				named = append(named, c)
			}
		}
		list := filepath.Join(b.TempDir(), "cases.json")
		data, _ := json.Marshal(named)
		if err := os.WriteFile(list, data, 0o644); err != nil {
			b.Fatal(err)
		}
		flags := peerFlags()
		cmd := exec.Command("node", filepath.Join(peers, "accname.mjs"), chromium, list, wptCaseAttr, string(flags))
		cmd.Dir = peers
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("playwright: %v", err)
		}
		var got struct {
			Outcomes map[string]int
		}
		if err := json.Unmarshal(out, &got); err != nil {
			b.Fatalf("playwright: %v: %s", err, out)
		}
		theirs = wptTally{n: len(named), by: got.Outcomes}
	}
	b.ReportMetric(float64(ours.resolved()), "ours-resolved")
	b.ReportMetric(float64(theirs.resolved()), "playwright-resolved")
	b.ReportMetric(float64(ours.chromium), "chromium-names")
	b.ReportMetric(float64(ours.n), "cases")
	b.Logf("WPT accname, cases resolved to the intended element of %d: ours %d (%v), Playwright %d (%v), Chromium's tree names %d as expected",
		ours.n, ours.resolved(), ours.by, theirs.resolved(), theirs.by, ours.chromium)
}
