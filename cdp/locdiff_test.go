package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/testenv"
)

// The locator differential suite: targets generated over pages with
// repeated structure, each answered by our lookup and by Playwright's
// equivalent chained locator (bench/browser/locdiff.mjs) on the same
// Chromium build, compared by count, by the element picked (its data-id)
// and by the text Tab.Text reads.

// vocab is what a page offers a target: the words a generator composes
// targets from, read from the page itself.
type vocab struct {
	Roles     []string `json:"roles"`
	Names     []string `json:"names"`
	Labels    []string `json:"labels"`
	Texts     []string `json:"texts"`
	TestIDs   []string `json:"testIds"`
	Selectors []string `json:"selectors"`
}

// harvestFn lists a page's roles, names, labels, texts, test ids and
// selectors, open shadow roots included. Selectors combine two elements
// of one tree only: a combinator never crosses a shadow boundary in our
// lookup (a documented difference).
const harvestFn = `() => {
  const roles = new Set(), texts = new Set(), labels = new Set(), ids = new Set(), sels = new Set();
  const implicit = { BUTTON: "button", TR: "row", TD: "cell", TH: "columnheader", LI: "listitem", UL: "list", TABLE: "table",
    H1: "heading", H2: "heading", H3: "heading", H4: "heading", NAV: "navigation", ARTICLE: "article", SELECT: "combobox",
    TEXTAREA: "textbox", FIELDSET: "group", MAIN: "main", DIALOG: "dialog", SECTION: "region", OPTION: "option" };
  const walk = (root) => {
    for (const e of root.querySelectorAll("*")) {
      const r = e.getAttribute("role") || implicit[e.tagName] || (e.tagName === "A" && e.hasAttribute("href") ? "link" : "") ||
        (e.tagName === "INPUT" ? ({ checkbox: "checkbox", radio: "radio" })[e.type] || "textbox" : "");
      if (r) roles.add(r);
      for (const n of e.childNodes) if (n.nodeType === 3 && n.data.trim()) texts.add(n.data.trim());
      for (const a of ["aria-label", "title"]) if (e.getAttribute(a)) labels.add(e.getAttribute(a));
      if (e.tagName === "LABEL" || e.tagName === "LEGEND") {
        const own = Array.from(e.childNodes, (n) => n.nodeType === 3 ? n.data : "").join(" ").trim();
        if (own) labels.add(own);
      }
      if (e.dataset.testid) ids.add(e.dataset.testid);
      const tag = e.tagName.toLowerCase();
      if (tag !== "template") sels.add(tag);
      for (const c of e.classList) { sels.add("." + c); sels.add(tag + "." + c); }
      const p = e.parentElement;
      if (p && p.tagName !== "BODY" && p.tagName !== "HTML") sels.add(p.tagName.toLowerCase() + " > " + tag);
      if (e.shadowRoot) walk(e.shadowRoot);
    }
  };
  walk(document);
  for (const s of ["html", "head", "body", "title"]) sels.delete(s);
  return { roles: [...roles], texts: [...texts], labels: [...labels], testIds: [...ids], selectors: [...sels] };
}`

// gen makes targets for one page from its vocabulary.
type gen struct {
	r *rand.Rand
	v vocab
}

func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// word is a piece of a text or label: the whole of it, one of its words,
// or it in another case, so that whole and partial matches both occur.
func (g *gen) word(s []string) string {
	w := g.pick(s)
	switch g.r.IntN(6) {
	case 0:
		f := strings.Fields(w)
		return f[g.r.IntN(len(f))]
	case 1:
		return strings.ToLower(w)
	case 2:
		if len(w) > 3 {
			return w[:len(w)-1]
		}
	}
	return w
}

// leaf is a target with one way and nothing composed.
func (g *gen) leaf() Locator {
	for {
		switch g.r.IntN(10) {
		case 0, 1, 2:
			if len(g.v.Roles) == 0 {
				continue
			}
			t := Locator{Role: g.pick(g.v.Roles)}
			if g.r.IntN(3) > 0 {
				t.Name = g.word(append(g.v.Texts, g.v.Labels...))
				t.Exact = g.r.IntN(5) == 0
			}
			return t
		case 3:
			if len(g.v.Labels) == 0 {
				continue
			}
			return Locator{Label: g.word(g.v.Labels), Exact: g.r.IntN(5) == 0}
		case 4, 5:
			if len(g.v.Texts) == 0 {
				continue
			}
			return Locator{Text: g.word(g.v.Texts)}
		case 6:
			if len(g.v.TestIDs) == 0 {
				continue
			}
			return Locator{TestID: g.pick(g.v.TestIDs)}
		default:
			return Locator{Selector: g.pick(g.v.Selectors)}
		}
	}
}

// target composes a target at depth (0 the outermost): a scope, filters
// and an nth, each part a target of its own one level deeper, down to
// the deepest level Check takes.
func (g *gen) target(depth int) Locator {
	t := g.leaf()
	deeper := depth+1 < maxLocatorDepth
	if deeper && g.r.IntN(5) < 2 {
		w := g.part(depth + 1)
		t.Within = &w
	}
	if g.r.IntN(5) == 0 {
		t.HasText = g.word(g.v.Texts)
	}
	if deeper && g.r.IntN(4) == 0 {
		h := g.part(depth + 1)
		t.Has = &h
	}
	if g.r.IntN(4) == 0 {
		t.Nth = intp([]int{0, 1, 2, -1}[g.r.IntN(4)])
	}
	return t
}

// part is a within or has part: as often as not a container (a
// selector, a role without a name), so that composed targets find
// something as often as they miss.
func (g *gen) part(depth int) Locator {
	if g.r.IntN(2) == 0 {
		return g.target(depth)
	}
	t := Locator{Selector: g.pick(g.v.Selectors)}
	if g.r.IntN(2) == 0 && len(g.v.Roles) > 0 {
		t = Locator{Role: g.pick(g.v.Roles)}
	}
	if depth+1 < maxLocatorDepth && g.r.IntN(4) == 0 {
		w := g.part(depth + 1)
		t.Within = &w
	}
	if g.r.IntN(4) == 0 {
		t.Nth = intp([]int{0, 1, -1}[g.r.IntN(3)])
	}
	return t
}

// answer is one side's answer for a target: how many elements it names
// and, for one, which and its text. Count -1 is an error.
type answer struct {
	Count int     `json:"count"`
	ID    string  `json:"id,omitempty"`
	Text  string  `json:"text,omitempty"`
	Us    float64 `json:"us,omitempty"`
	Error string  `json:"error,omitempty"`
	// Whole is Playwright's answer with every loose name, label and text
	// read whole; Fields, with every label naming fields only;
	// WholeFields, both.
	Whole       *answer `json:"whole,omitempty"`
	Fields      *answer `json:"fields,omitempty"`
	WholeFields *answer `json:"wholeFields,omitempty"`
}

func (a answer) same(b answer) bool {
	if a.Count != b.Count {
		return false
	}
	return a.Count != 1 || a.ID == b.ID && a.Text == b.Text
}

func (a answer) String() string {
	switch {
	case a.Count < 0:
		return "error " + a.Error
	case a.Count == 1:
		return fmt.Sprintf("1 (%s %q)", a.ID, a.Text)
	}
	return fmt.Sprint(a.Count)
}

// knownDifference is a documented way our lookup and Playwright's part.
// explains reports whether it accounts for a disagreement; nil marks a
// difference the generated targets stay clear of (the pages hold no
// frames, selectors combine elements of one tree), listed so that the
// table is whole.
type knownDifference struct {
	name, why string
	explains  func(c diffCase) bool
}

// knownDifferences is the table the guide's locator section repeats.
var knownDifferences = []knownDifference{
	{"whole name preferred", "a loose name, label or text that some element matches whole takes only the whole matches; " +
		"Playwright takes every element holding it (ours agrees with Playwright reading it whole)",
		func(c diffCase) bool { return agrees(c.ours, c.theirs.Whole) }},
	{"labels name fields", "a label target names fields and widgets; Playwright's getByLabel also takes any element " +
		"by its aria-label or aria-labelledby (a nav, a dialog, a grid), which {role, name} names in ours",
		func(c diffCase) bool { return agrees(c.ours, c.theirs.Fields) }},
	{"whole name preferred, labels name fields", "both of the above at once",
		func(c diffCase) bool { return agrees(c.ours, c.theirs.WholeFields) }},
	{"a wrapping label's text", "a label wrapping its field names it by the label's own text, as the accessible name " +
		"does; Playwright reads the label's whole text, a select's options included, so an exact or whole label misses there",
		func(c diffCase) bool {
			return hasLabel(&c.loc) && (c.ours.Count > c.theirs.Count || c.theirs.Whole != nil && c.ours.Count > c.theirs.Whole.Count)
		}},
	{"nth in shadow trees", "nth counts in document order with a shadow host's tree right after the host, the order a " +
		"person reads; Playwright counts a tree's matches before those of the shadow trees in it (same count, another pick)",
		func(c diffCase) bool {
			return strings.Contains(c.page, "shadow") && hasNth(&c.loc) && c.ours.Count == c.theirs.Count
		}},
	{"selector combinators stop at shadow roots", "a selector is matched in each shadow tree on its own; " +
		`Playwright's "my-field input" reaches into my-field's shadow root`, nil},
	{"ambiguous", "several usable matches are ambiguous for every action and read; Playwright is strict for " +
		"actions and reads too, but first(), all() and evaluateAll take what matches", nil},
	{"frames", "every frame is searched (frame: narrows); Playwright reaches a frame only through frameLocator", nil},
}

// hasLabel reports whether any level of t is a label.
func hasLabel(t *Locator) bool {
	return t != nil && (t.Label != "" || hasLabel(t.Within) || hasLabel(t.Has))
}

// hasNth reports whether any level of t sets Nth.
func hasNth(t *Locator) bool {
	return t != nil && (t.Nth != nil || hasNth(t.Within) || hasNth(t.Has))
}

// agrees reports whether ours is a variant's answer, when there is one.
func agrees(ours answer, variant *answer) bool { return variant != nil && ours.same(*variant) }

// diffCase is a target on a page with both answers.
type diffCase struct {
	page         string
	loc          Locator
	ours, theirs answer
}

// diffSuite builds the pages and targets, answers them on both sides, and
// returns every case. Our side answers parallel pages at a time (the
// benchmark times one at a time, as Playwright's side runs).
func diffSuite(tb testing.TB, perPage, parallel int) []diffCase {
	root, err := testenv.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "browser", "node_modules", "playwright-core")); err != nil {
		tb.Fatalf("the differential suite needs playwright-core (install it with: make tools): %v", err)
	}
	peers := testenv.BrowserPeers(tb, "playwright-core")
	chromium, err := testenv.LookChromium()
	if err != nil {
		tb.Fatalf("chromium: %v (install with: %s)", err, testenv.ChromiumInstall)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pages := diffPages()
	type pageRun struct {
		url  string
		tab  *Tab
		locs []Locator
	}
	runs := make([]pageRun, len(pages))
	specs := map[string][]Locator{}
	for i, p := range pages {
		url := serve(p.path, p.html)
		tab, err := sharedConn.NewTabWith(ctx, url, TabOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = tab.Close(context.Background()) })
		raw, err := tab.Evaluate(ctx, harvestFn)
		if err != nil {
			tb.Fatalf("%s: %v", p.path, err)
		}
		var v vocab
		if err := json.Unmarshal(raw, &v); err != nil {
			tb.Fatal(err)
		}
		slices.Sort(v.Roles)
		slices.Sort(v.Texts)
		slices.Sort(v.Labels)
		slices.Sort(v.TestIDs)
		slices.Sort(v.Selectors)
		g := gen{r: rand.New(rand.NewPCG(uint64(i)+1, 2026)), v: v}
		var locs []Locator
		for len(locs) < perPage {
			if t := g.target(0); t.Check() == nil {
				locs = append(locs, t)
			}
		}
		runs[i] = pageRun{url, tab, locs}
		specs[url] = locs
	}
	// Playwright's side runs on a browser of its own: in the test, beside
	// ours and parallel pages at a time; in the benchmark, first and one
	// page at a time, so that neither side's timings see the other's work.
	peer := startPeer(tb, peers, "locdiff.mjs", chromium)
	type pwAnswers struct {
		got map[string][]answer
		err error
		in  time.Duration
	}
	pw := make(chan pwAnswers, 1)
	runPW := func() {
		t0 := time.Now()
		got, err := playwrightAnswers(peer, specs, true, parallel)
		pw <- pwAnswers{got, err, time.Since(t0)}
	}
	if parallel > 1 {
		go runPW()
	} else {
		runPW()
	}

	// Ours: a tab per page, a few pages at a time.
	t0 := time.Now()
	answers := make([][]answer, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, loc := range r.locs {
				answers[i] = append(answers[i], ourAnswer(ctx, r.tab, loc))
			}
		}()
	}
	wg.Wait()
	ours := time.Since(t0)
	p := <-pw
	if p.err != nil {
		tb.Fatal(p.err)
	}
	theirs := p.got
	tb.Logf("answers: Playwright's in %s, ours in %s (%d pages at a time)", p.in.Round(time.Millisecond), ours.Round(time.Millisecond), parallel)
	var cases []diffCase
	for i, r := range runs {
		th := theirs[r.url]
		if len(th) != len(r.locs) {
			tb.Fatalf("%s: playwright answered %d of %d targets", r.url, len(th), len(r.locs))
		}
		for j, loc := range r.locs {
			cases = append(cases, diffCase{pages[i].path, loc, answers[i][j], th[j]})
		}
	}
	variants(tb, peer, cases, parallel)
	return cases
}

// variants asks Playwright for its variant answers (answer.Whole, Fields,
// WholeFields) to the cases where its answer is not ours: only those read
// them (verdict's knownDifferences), and asking every target costs up to
// three more count() calls a target.
func variants(tb testing.TB, peer *peerProc, cases []diffCase, parallel int) {
	specs := map[string][]Locator{}
	at := map[string][]int{} // the cases of each page's targets
	for i, c := range cases {
		if c.ours.same(c.theirs) || c.ours.Count < 0 && c.theirs.Count < 0 {
			continue
		}
		url := site.URL + c.page // as serve made it
		specs[url] = append(specs[url], c.loc)
		at[url] = append(at[url], i)
	}
	if len(specs) == 0 {
		return
	}
	got, err := playwrightAnswers(peer, specs, true, parallel)
	if err != nil {
		tb.Fatal(err)
	}
	for url, idx := range at {
		if len(got[url]) != len(idx) {
			tb.Fatalf("%s: playwright answered %d of %d targets", url, len(got[url]), len(idx))
		}
		for j, i := range idx {
			a := got[url][j]
			cases[i].theirs.Whole, cases[i].theirs.Fields, cases[i].theirs.WholeFields = a.Whole, a.Fields, a.WholeFields
		}
	}
}

// ourAnswer is our lookup's answer for loc: Count, then for one match
// its data-id and Tab.Text.
func ourAnswer(ctx context.Context, tab *Tab, loc Locator) answer {
	t0 := time.Now()
	n, err := tab.Count(ctx, loc)
	a := answer{Count: n, Us: float64(time.Since(t0).Microseconds())}
	if err != nil {
		return answer{Count: -1, Error: err.Error()}
	}
	if n != 1 {
		return a
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	id, _, err := tab.Attribute(rctx, loc, "data-id")
	if err == nil {
		a.ID = id
		a.Text, err = tab.Text(rctx, loc)
	}
	if err != nil {
		a.Error = err.Error()
		var le *LocatorError
		if errors.As(err, &le) && le.Code == errcode.Ambiguous {
			a.ID = "(ambiguous)"
		}
	}
	return a
}

// playwrightAnswers has locdiff.mjs (see startPeer) answer specs,
// parallel pages at a time, with its variant answers or without.
func playwrightAnswers(peer *peerProc, specs map[string][]Locator, withVariants bool, parallel int) (map[string][]answer, error) {
	req := map[string]any{"specs": specs, "variants": withVariants, "parallel": parallel}
	if err := peer.send(req); err != nil {
		return nil, err
	}
	var got map[string][]answer
	if err := peer.next(&got); err != nil {
		return nil, err
	}
	return got, nil
}

// verdict sorts the cases into agreeing ones, known differences (by
// name) and disagreements.
func verdict(cases []diffCase) (agree int, known map[string]int, bad []diffCase) {
	known = map[string]int{}
	for _, c := range cases {
		if c.ours.same(c.theirs) || c.ours.Count < 0 && c.theirs.Count < 0 {
			agree++
			continue
		}
		explained := false
		for _, k := range knownDifferences {
			if k.explains != nil && k.explains(c) {
				known[k.name]++
				explained = true
				break
			}
		}
		if !explained {
			bad = append(bad, c)
		}
	}
	return agree, known, bad
}

// Our locators agree with Playwright's equivalents on over 1,000
// generated targets, but for the differences knownDifferences documents.
func TestLocatorDifferential(t *testing.T) {
	t0 := time.Now()
	cases := diffSuite(t, 50, 4)
	agree, known, bad := verdict(cases)
	hits := 0
	for _, c := range cases {
		if c.theirs.Count > 0 {
			hits++
		}
	}
	t.Logf("%d targets on %d pages (%d match something): %d agree, known differences %v, %d disagree, in %s",
		len(cases), len(diffPages()), hits, agree, known, len(bad), time.Since(t0).Round(time.Millisecond))
	if len(cases) < 1000 {
		t.Errorf("only %d targets", len(cases))
	}
	for i, c := range bad {
		if i == 200 {
			t.Errorf("… and %d more", len(bad)-i)
			break
		}
		spec, _ := json.Marshal(c.loc)
		t.Errorf("%s %s: ours %s, playwright %s (whole %v) %s", c.page, spec, c.ours, c.theirs, c.theirs.Whole, c.ours.Error)
	}
}

// BenchmarkLocatorDifferential runs the differential suite's 1,250
// targets and reports how many agree with Playwright (agreeing, total,
// agree-ratio; the documented differences count as disagreeing here) and
// the p50 time of one lookup (Count) ours against Playwright's count()
// of the same target on the same page (p50-ratio; target ≤ 1.0).
func BenchmarkLocatorDifferential(b *testing.B) {
	var cases []diffCase
	for b.Loop() {
		cases = diffSuite(b, 50, 1)
	}
	agree, _, _ := verdict(cases) // documented differences count as disagreeing here
	var ours, theirs []float64
	for _, c := range cases {
		ours = append(ours, c.ours.Us)
		theirs = append(theirs, c.theirs.Us)
	}
	b.ReportMetric(float64(agree), "agreeing")
	b.ReportMetric(float64(len(cases)), "total")
	b.ReportMetric(float64(agree)/float64(len(cases)), "agree-ratio")
	b.ReportMetric(median(ours), "ours-p50-µs")
	b.ReportMetric(median(theirs), "playwright-p50-µs")
	b.ReportMetric(median(ours)/median(theirs), "p50-ratio")
}
