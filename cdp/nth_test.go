package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// nthPage repeats itself at every level a target can name: paragraphs
// with and without buttons in two sections, a labelled field, a test id,
// and a table whose rows each hold cells and a Delete button.
const nthPage = `<!doctype html><title>nth</title>
<section id=s0>
  <p id=p0>Welcome, no button here</p>
  <p id=p1><button id=b1>Sign up</button></p>
  <p id=p2><button id=b2>Sign in</button> <button id=b3>Help</button></p>
</section>
<section id=s1>
  <p id=p3><button id=b4>Delete</button> <label>Note <input id=i1></label></p>
  <p id=p4><span id=t1 data-testid=tag>tag</span> <button id=b5>Delete</button></p>
</section>
<table>
  <tr id=r0><th>Name</th><th>First</th><th>Second</th><th></th></tr>
  <tr id=r1><td>Ada</td><td>Paid</td><td>Paid</td><td><button id=d1 onclick="window.clicked='d1'">Delete</button></td></tr>
  <tr id=r2><td><button id=x2>Open</button></td><td>Paid</td><td>Due</td><td><button id=d2 onclick="window.clicked='d2'">Delete</button></td></tr>
  <tr id=r3><td>Alan</td><td>Due</td><td>Due</td><td><button id=d3 onclick="window.clicked='d3'">Delete</button></td></tr>
  <tr id=r4><td><button id=x4>Open</button></td><td>Paid</td><td>Paid</td><td><button id=d4 onclick="window.clicked='d4'">Delete</button></td></tr>
</table>`

// nthCase is a target and the page's own answer, as a function that
// returns the ids of the elements it names (the way Playwright's chained
// locators read).
type nthCase struct {
	loc   Locator
	truth string
}

// checkNth holds loc's count and lookups to the page's truth: the count
// agrees, each nth picks the element the truth has there, and without a
// top-level nth a single match resolves, none is not_found and several
// are ambiguous.
func checkNth(t *testing.T, tab *Tab, c nthCase) {
	t.Helper()
	ctx := tctx(t, 60*time.Second)
	v, err := tab.Evaluate(ctx, c.truth)
	require.NoError(t, err, "%s: the truth", c.loc)
	var want []string
	require.NoError(t, json.Unmarshal(v, &want), "%s", v)
	n, err := tab.Count(ctx, c.loc)
	require.NoError(t, err, "%s", c.loc)
	require.Equal(t, len(want), n, "%s: count, want %v", c.loc, want)
	for i, id := range want {
		at := c.loc
		at.Nth = intp(i)
		el, err := tab.Resolve(ctx, at)
		require.NoError(t, err, "%s", at)
		require.Equal(t, id, el.Element.ID, "%s", at)
	}
	el, err := tab.Resolve(ctx, c.loc)
	switch len(want) {
	case 0:
		require.ErrorIs(t, err, errcode.NotFound, "%s", c.loc)
	case 1:
		require.NoError(t, err, "%s", c.loc)
		require.Equal(t, want[0], el.Element.ID, "%s", c.loc)
	default:
		require.ErrorIs(t, err, errcode.Ambiguous, "%s", c.loc)
		require.Contains(t, err.Error(), fmt.Sprintf("%d elements match", len(want)))
	}
}

// ids is the truth's helper: the ids of a list of elements.
const ids = `const ids = (els) => Array.from(els, (e) => e.id);
  const all = (sel, root = document) => Array.from(root.querySelectorAll(sel));`

// nth works at every level of a target: in a within part it picks among
// that part's matches, in a has part among the matches inside each
// element being filtered, and within of within in turn, whatever way the
// inner target finds its elements.
func TestNthAtEveryLevel(t *testing.T) {
	tab := newTab(t, serve("/nth/levels", nthPage))
	// The deepest elements whose text holds s, as a text target finds them.
	const byText = `const byText = (root, s) => all("*", root).filter((e) => e.textContent.toLowerCase().includes(s) &&
    !Array.from(e.children).some((c) => c.textContent.toLowerCase().includes(s)));`
	for _, c := range []nthCase{
		// within: the nth of the scope's matches, never ignored.
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(0)}},
			`() => { ` + ids + ` return ids(all("button", all("p")[0])); }`},
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(2)}},
			`() => { ` + ids + ` return ids(all("button", all("p")[2])); }`},
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(-1)}},
			`() => { ` + ids + ` return ids(all("button", all("p").at(-1))); }`},
		{Locator{Role: "button", Name: "Delete", Within: &Locator{Role: "row", Nth: intp(3)}},
			`() => { ` + ids + ` return ids(all("button", all("tr")[3]).filter((b) => b.textContent === "Delete")); }`},
		{Locator{Role: "button", Within: &Locator{Role: "row", Nth: intp(2)}},
			`() => { ` + ids + ` return ids(all("button", all("tr")[2])); }`},
		{Locator{Label: "Note", Within: &Locator{Selector: "section", Nth: intp(0)}},
			`() => { ` + ids + ` return ids(all("input", all("section")[0])); }`},
		{Locator{Label: "Note", Within: &Locator{Selector: "section", Nth: intp(1)}},
			`() => { ` + ids + ` return ids(all("input", all("section")[1])); }`},
		{Locator{TestID: "tag", Within: &Locator{Selector: "p", Nth: intp(4)}},
			`() => { ` + ids + ` return ids(all("[data-testid=tag]", all("p")[4])); }`},
		{Locator{Text: "Delete", Within: &Locator{Selector: "tr", Nth: intp(-1)}},
			`() => { ` + ids + byText + ` return ids(byText(all("tr").at(-1), "delete")); }`},
		{Locator{Selector: "td", Within: &Locator{Role: "row", Name: "Paid", Nth: intp(1)}},
			`() => { ` + ids + ` return ids(all("td", all("tr").filter((r) => r.textContent.includes("Paid"))[1])); }`},
		// The scope's own filters come before its nth.
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Has: &Locator{Selector: "button"}, Nth: intp(1)}},
			`() => { ` + ids + ` return ids(all("button", all("p").filter((p) => p.querySelector("button"))[1])); }`},
		{Locator{Selector: "button", Within: &Locator{Selector: "p", HasText: "delete", Nth: intp(-1)}},
			`() => { ` + ids + ` return ids(all("button", all("p").filter((p) => p.textContent.includes("Delete")).at(-1))); }`},
		// within of within: each level picks among its own matches.
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(1), Within: &Locator{Selector: "section", Nth: intp(1)}}},
			`() => { ` + ids + ` return ids(all("button", all("p", all("section")[1])[1])); }`},
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(0), Within: &Locator{Selector: "section", Nth: intp(1)}}},
			`() => { ` + ids + ` return ids(all("button", all("p", all("section")[1])[0])); }`},
		{Locator{Selector: "button", Within: &Locator{Selector: "p", Within: &Locator{Selector: "section", Nth: intp(0)}}},
			`() => { ` + ids + ` return ids(all("button", all("section")[0])); }`},
		{Locator{Role: "button", Within: &Locator{Selector: "p", Nth: intp(2), Within: &Locator{Selector: "section"}}},
			`() => { ` + ids + ` return ids(all("button", all("section p")[2])); }`},
		// has: the nth counts inside each element being filtered.
		{Locator{Selector: "p", Has: &Locator{Selector: "button", Nth: intp(1)}},
			`() => { ` + ids + ` return ids(all("p").filter((p) => all("button", p).length > 1)); }`},
		{Locator{Selector: "p", Has: &Locator{Selector: "button", Nth: intp(-1)}},
			`() => { ` + ids + ` return ids(all("p").filter((p) => all("button", p).length > 0)); }`},
		{Locator{Role: "row", Has: &Locator{Role: "cell", Name: "Paid", Exact: true, Nth: intp(1)}},
			`() => { ` + ids + ` return ids(all("tr").filter((r) => all("td", r).filter((c) => c.textContent === "Paid").length > 1)); }`},
		{Locator{Selector: "tr", Has: &Locator{Selector: "button", Within: &Locator{Selector: "td", Nth: intp(0)}}},
			`() => { ` + ids + ` return ids(all("tr").filter((r) => all("td", r)[0]?.querySelector("button"))); }`},
		{Locator{Selector: "tr", Has: &Locator{Role: "button", Name: "Delete", Within: &Locator{Role: "cell", Nth: intp(0)}}},
			`() => { ` + ids + ` return ids(all("tr").filter((r) => all("td", r)[0]?.textContent.includes("Delete"))); }`},
		{Locator{Selector: "p", Has: &Locator{Label: "Note", Nth: intp(0)}},
			`() => { ` + ids + ` return ids(all("p").filter((p) => p.querySelector("label input"))); }`},
		{Locator{Selector: "section", Has: &Locator{Text: "Delete", Nth: intp(1)}},
			`() => { ` + ids + byText + ` return ids(all("section").filter((s) => byText(s, "delete").length > 1)); }`},
		{Locator{Selector: "section", Has: &Locator{TestID: "tag", Nth: intp(1)}},
			`() => []`},
		// A has inside a within, and a within of a within's has.
		{Locator{Role: "button", Within: &Locator{Selector: "tr", Has: &Locator{Role: "cell", Name: "Paid", Exact: true, Nth: intp(1)}, Nth: intp(1)}},
			`() => { ` + ids + ` return ids(all("button", all("tr").filter((r) => all("td", r).filter((c) => c.textContent === "Paid").length > 1)[1])); }`},
	} {
		t.Run(c.loc.String(), func(t *testing.T) { checkNth(t, tab, c) })
	}
}

// The faults this fixes, as a script met them: a within part's nth was
// ignored, so a count, a read and a click answered for the whole page,
// and an ambiguous error read as if the nth applied.
func TestNthInWithinIsNotIgnored(t *testing.T) {
	tab := newTab(t, serve("/nth/faults", nthPage))
	ctx := tctx(t, 60*time.Second)
	inFirst := Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(0)}}
	n, err := tab.Count(ctx, inFirst)
	require.NoError(t, err)
	require.Equal(t, 0, n, "the first <p> holds no button")
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = tab.Text(short, inFirst)
	require.ErrorIs(t, err, errcode.NotFound)
	require.Contains(t, err.Error(), `within [selector "p" (nth 0)]`)

	_, err = tab.Resolve(ctx, Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(2)}})
	require.ErrorIs(t, err, errcode.Ambiguous)
	require.Contains(t, err.Error(), `selector "button" within [selector "p" (nth 2)]: 2 elements match`)
	s, err := tab.Text(ctx, Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(1)}})
	require.NoError(t, err)
	require.Equal(t, "Sign up", s)

	// Each row has its own Delete: the row's nth says which is clicked.
	for _, row := range []int{3, 1} {
		require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Delete", Within: &Locator{Role: "row", Nth: intp(row)}}, FormOptions{}))
		v, err := tab.Evaluate(ctx, `() => window.clicked`)
		require.NoError(t, err)
		require.JSONEq(t, fmt.Sprintf(`"d%d"`, row), string(v))
	}
	// Past the scope's matches is a miss that says so.
	_, err = tab.Resolve(ctx, Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(5)}})
	require.ErrorIs(t, err, errcode.NotFound)
	require.Contains(t, err.Error(), "nth 5 is past the 5 elements that match")
	_, err = tab.Resolve(ctx, Locator{Selector: "p", Has: &Locator{Selector: "button", Nth: intp(2)}})
	require.ErrorIs(t, err, errcode.NotFound)
	require.Contains(t, err.Error(), "past the matches inside each element it is counted in (2 at most)")
}

// A within part's nth counts over the page and its frames, in order, as a
// target's own nth does, not in each frame apart.
func TestNthInWithinCountsOverFrames(t *testing.T) {
	serve("/nth/frame-inner", `<!doctype html><p id=fp0><button id=fb0>In frame 0</button></p><p id=fp1><button id=fb1>In frame 1</button></p>`)
	tab := newTab(t, serve("/nth/frames", `<!doctype html><title>frames</title>
<p id=mp0>no button</p><p id=mp1><button id=mb1>Main 1</button></p>
<iframe src="/nth/frame-inner"></iframe>`))
	waitFrames(t, tab, 1)
	ctx := tctx(t, 60*time.Second)
	for k, want := range map[int]string{0: "", 1: "mb1", 2: "fb0", 3: "fb1", -1: "fb1", -2: "fb0", -3: "mb1", -4: ""} {
		loc := Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(k)}}
		el, err := tab.Resolve(ctx, loc)
		n, cerr := tab.Count(ctx, loc)
		require.NoError(t, cerr)
		if want == "" {
			require.ErrorIs(t, err, errcode.NotFound, "%s", loc)
			require.Equal(t, 0, n, "%s", loc)
			continue
		}
		require.NoError(t, err, "%s", loc)
		require.Equal(t, want, el.Element.ID, "%s", loc)
		require.Equal(t, 1, n, "%s", loc)
		if strings.HasPrefix(want, "f") {
			require.NotEmpty(t, el.Element.Frame)
		}
	}
	_, err := tab.Resolve(ctx, Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(4)}})
	var le *LocatorError
	require.True(t, errors.As(err, &le) && le.Code == errcode.NotFound, "%v", err)
	require.Contains(t, err.Error(), "nth 4 is past the 4 elements that match")
	n, err := tab.Count(ctx, Locator{Selector: "button", Within: &Locator{Selector: "p", Nth: intp(4)}})
	require.NoError(t, err)
	require.Equal(t, 0, n)
}
