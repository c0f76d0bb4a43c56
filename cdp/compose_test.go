package cdp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

var orderNames = []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Ada Yonath"}

// ordersPage is a table whose rows repeat themselves, as real pages do:
// each order has its own "Edit" button and "Remove" link, and one row is
// hidden.
func ordersPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>orders</title><table id=orders><tr><th>Customer</th><th>Total</th><th>Actions</th></tr>`)
	for i, n := range orderNames {
		fmt.Fprintf(&b, `<tr id=r%d><td>%s</td><td>%d.00</td><td><button id=e%d>Edit</button> <a href="#rm%d" id=x%d>Remove</a></td></tr>`, i, n, 10*(i+1), i, i, i)
	}
	b.WriteString(`<tr id=rh hidden><td>Hidden Person</td><td>0.00</td><td><button id=eh>Edit</button></td></tr></table>`)
	return b.String()
}

func intp(n int) *int { return &n }

// Targets compose: a scope, filters by text and by what a match holds,
// and nth, the only way to accept one of several matches.
func TestComposedTargets(t *testing.T) {
	tab := newTab(t, serve("/compose/orders", ordersPage()))
	ctx := tctx(t, 60*time.Second)
	edit := Locator{Role: "button", Name: "Edit"}
	row := func(name string) *Locator { return &Locator{Role: "row", Name: name} }
	for _, c := range []struct {
		loc Locator
		id  string
	}{
		{Locator{Role: "button", Name: "Edit", Within: row("Ada Lovelace")}, "e0"},
		{Locator{Role: "button", Name: "Edit", Within: row("Grace Hopper")}, "e1"},
		{Locator{Role: "link", Name: "Remove", Within: row("Alan Turing")}, "x2"},
		{Locator{Text: "Edit", Within: &Locator{Selector: "#r3"}}, "e3"},
		{Locator{Role: "button", Name: "Edit", Within: &Locator{Role: "row", HasText: "liskov"}}, "e4"},
		{Locator{Selector: "tr", HasText: "Barbara   Liskov"}, "r4"},
		{Locator{Selector: "tr", Has: &Locator{Role: "cell", Name: "Edsger Dijkstra"}}, "r3"},
		{Locator{Role: "row", Has: &Locator{Text: "30.00"}}, "r2"},
		{Locator{Role: "button", Name: "Edit", Nth: intp(0)}, "e0"},
		{Locator{Role: "button", Name: "Edit", Nth: intp(2)}, "e2"},
		{Locator{Role: "button", Name: "Edit", Nth: intp(-1)}, "e5"}, // the hidden row's button is not in the tree
		{Locator{Selector: "button", Nth: intp(-2)}, "e5"},
		{Locator{Role: "button", Name: "Edit", Within: &Locator{Role: "table"}, Nth: intp(1)}, "e1"},
		{Locator{Selector: "td", Within: &Locator{Selector: "tr", Nth: intp(2)}, Nth: intp(1)}, ""},
	} {
		el, err := tab.Resolve(ctx, c.loc)
		if !assertNoErr(t, c.loc, err) {
			continue
		}
		if c.id != "" && el.Element.ID != c.id {
			t.Errorf("%s: resolved %s, want #%s", c.loc, el.Element, c.id)
		}
	}

	// Without nth, several usable matches are ambiguous, and the count
	// is what the error lists.
	_, err := tab.Resolve(ctx, edit)
	var le *LocatorError
	require.ErrorAs(t, err, &le)
	require.Equal(t, errcode.Ambiguous, le.Code, "%v", err)
	require.Contains(t, le.Message, "6 elements match")
	n, err := tab.Count(ctx, edit)
	require.NoError(t, err)
	require.Equal(t, 6, n)
	// "Ada" is part of two rows' names: the scope matches both.
	_, err = tab.Resolve(ctx, Locator{Role: "button", Name: "Edit", Within: row("Ada")})
	require.ErrorIs(t, err, errcode.Ambiguous)
	n, err = tab.Count(ctx, Locator{Role: "button", Name: "Edit", Within: row("Ada")})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = tab.Count(ctx, Locator{Selector: "button", HasText: "edit"})
	require.NoError(t, err)
	require.Equal(t, 7, n, "count includes the hidden row's button")
	_, err = tab.Resolve(ctx, Locator{Selector: "button", Nth: intp(6)})
	require.ErrorIs(t, err, errcode.Hidden, "nth counts hidden matches and picks only the one it names")

	// Misses say which part found nothing.
	for _, c := range []struct {
		loc  Locator
		want string
	}{
		{Locator{Role: "button", Name: "Edit", Within: row("Nobody")}, "within part"},
		{Locator{Selector: "tr", Has: &Locator{Role: "button", Name: "Delete"}}, "has part"},
		{Locator{Selector: "tr", HasText: "Nobody"}, "not its filters"},
		{Locator{Role: "button", Name: "Edit", Nth: intp(6)}, "nth 6 is past the 6 elements"},
		{Locator{Role: "button", Name: "Edit", Nth: intp(-7)}, "past the 6"},
	} {
		_, err := tab.Resolve(ctx, c.loc)
		require.ErrorIs(t, err, errcode.NotFound, "%s", c.loc)
		require.Contains(t, err.Error(), c.want, "%s", c.loc)
	}

	// The actions take composed targets too, whichever way they find
	// their element.
	require.NoError(t, tab.ClickElement(ctx, Locator{Selector: "a", HasText: "remove", Within: &Locator{Selector: "tr", HasText: "Barbara"}}, FormOptions{}))
	v, err := tab.Evaluate(ctx, `() => location.hash`)
	require.NoError(t, err)
	require.JSONEq(t, `"#rm4"`, string(v))
	require.NoError(t, tab.ClickElement(ctx, Locator{Selector: "a", Nth: intp(3)}, FormOptions{}))
	v, err = tab.Evaluate(ctx, `() => location.hash`)
	require.NoError(t, err)
	require.JSONEq(t, `"#rm3"`, string(v))
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "link", Name: "Remove", Within: row("Grace Hopper")}, FormOptions{}))
	v, err = tab.Evaluate(ctx, `() => location.hash`)
	require.NoError(t, err)
	require.JSONEq(t, `"#rm1"`, string(v))
	s, err := tab.Text(ctx, Locator{Role: "cell", Within: row("Alan Turing"), Nth: intp(1)})
	require.NoError(t, err)
	require.Equal(t, "30.00", s)
}

func assertNoErr(t *testing.T, loc Locator, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", loc, err)
		return false
	}
	return true
}

// Check refuses composed targets that cannot name an element.
func TestComposedTargetsChecked(t *testing.T) {
	deep := Locator{Selector: "a"}
	for range maxLocatorDepth {
		inner := deep
		deep = Locator{Selector: "b", Within: &inner}
	}
	for _, c := range []struct {
		loc  Locator
		want string
	}{
		{Locator{Selector: "a", Within: &Locator{}}, `its "within" part: the target names no element`},
		{Locator{Selector: "a", Has: &Locator{Selector: "b", Text: "c"}}, `its "has" part`},
		{Locator{Selector: "a", Within: &Locator{Selector: "b", Frame: "f"}}, `"frame" goes on the outermost target`},
		{deep, "nest at most"},
	} {
		err := c.loc.Check()
		require.ErrorIs(t, err, errcode.BadTarget, "%s", c.loc)
		require.Contains(t, err.Error(), c.want)
	}
	require.NoError(t, Locator{Role: "button", Within: &Locator{Role: "row", Has: &Locator{Text: "x"}}, Nth: intp(-1)}.Check())
	require.Equal(t, `role "button" name "Edit" within role "row" name "Ada" with text "x" holding text "y" (nth 2)`,
		Locator{Role: "button", Name: "Edit", Within: &Locator{Role: "row", Name: "Ada"}, HasText: "x", Has: &Locator{Text: "y"}, Nth: intp(2)}.String())
}

// repeatsPage names elements alike in ways the quick look at likely
// elements must see through: text split over blocks, a hidden part of an
// element's text, attributes, and the same name in a frame.
const repeatsPage = `<!doctype html><title>repeats</title>
<a href="#1" id=l1><span>Delete</span><div>this</div></a>
<a href="#2" id=l2>Delete this</a>
<button id=b1>Sa<span hidden>xx</span>ve</button>
<button id=b2>Save</button>
<button id=b3 aria-label="label">one</button><button id=b4 aria-label="label">two</button><button id=b5 title="label"></button>
<h2 id=h1>Profile</h2><h2 id=h2>Pro<b>file</b></h2>
<style>.trash::after { content: "Trash can" } @media screen { .bin::before { content: attr(data-what) } }</style>
<button id=t1>Trash can</button><button id=t2 class=trash></button><button id=t3 class=bin data-what="Trash can"></button>
<iframe src="/compose/repeats-inner" style="height:80px"></iframe>`

const repeatsInner = `<!doctype html><button id=fb>Archive</button><button id=fb2>Send</button>`

// Never a guess: every way to share a role and a name is ambiguous, in
// the page and across frames, and count agrees with the lookup.
func TestRepeatedNamesAreAmbiguous(t *testing.T) {
	serve("/compose/repeats-inner", repeatsInner)
	tab := newTab(t, serve("/compose/repeats", repeatsPage+`<button id=pb>Archive</button>`))
	ctx := tctx(t, 60*time.Second)
	waitFrames(t, tab, 1)
	for _, c := range []struct {
		loc  Locator
		want int
	}{
		{Locator{Role: "link", Name: "Delete this"}, 2},
		{Locator{Role: "link", Name: "Delete this", Exact: true}, 2},
		{Locator{Role: "button", Name: "Save"}, 2},
		{Locator{Role: "button", Name: "label"}, 3},
		{Locator{Role: "heading", Name: "Profile", Exact: true}, 2},
		{Locator{Role: "button", Name: "Trash can"}, 3}, // two by generated content
		{Locator{Role: "button", Name: "Archive"}, 2},   // one in the page, one in the frame
	} {
		_, err := tab.Resolve(ctx, c.loc)
		if !errors.Is(err, errcode.Ambiguous) {
			t.Errorf("%s: want ambiguous, got %v", c.loc, err)
		}
		n, err := tab.Count(ctx, c.loc)
		require.NoError(t, err)
		require.Equal(t, c.want, n, "%s: count", c.loc)
		for i := range c.want {
			_, err := tab.Resolve(ctx, Locator{Role: c.loc.Role, Name: c.loc.Name, Exact: c.loc.Exact, Nth: intp(i)})
			require.NoError(t, err, "%s nth %d", c.loc, i)
		}
	}
	el, err := tab.Resolve(ctx, Locator{Role: "button", Name: "Archive", Nth: intp(1)})
	require.NoError(t, err)
	require.Equal(t, "fb", el.Element.ID, "nth runs through the main frame, then its frames")
	require.NotEmpty(t, el.Element.Frame)
	el, err = tab.Resolve(ctx, Locator{Role: "button", Name: "Send"})
	require.NoError(t, err)
	require.Equal(t, "fb2", el.Element.ID)
	// The tree's document node is the Document; its element stands for it.
	el, err = tab.Resolve(ctx, Locator{Role: "document", Name: "repeats"})
	require.NoError(t, err)
	require.Equal(t, "html", el.Element.Tag)
}

// waitFrames waits until the tab knows n frames below the main one.
func waitFrames(t *testing.T, tab *Tab, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		frames, _ := tab.searchFrames("")
		if len(frames) > n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's %d frames did not load", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A scope or a filter's inner target needs every match, however many:
// only the set a lookup picks from may be cut short.
func TestComposedScopesKeepEveryMatch(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>many rows</title><table>`)
	for i := range 100 {
		fmt.Fprintf(&b, `<tr><td>Item %d</td><td><button id=e%d>Edit</button></td></tr>`, i, i)
	}
	b.WriteString(`</table>`)
	tab := newTab(t, serve("/compose/many-rows", b.String()))
	ctx := tctx(t, 60*time.Second)
	inRows := Locator{Role: "button", Name: "Edit", Within: &Locator{Role: "row"}}
	n, err := tab.Count(ctx, inRows)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	_, err = tab.Resolve(ctx, inRows)
	require.ErrorIs(t, err, errcode.Ambiguous)
	require.Contains(t, err.Error(), "100 elements match")
	el, err := tab.Resolve(ctx, Locator{Role: "button", Name: "Edit", Within: &Locator{Role: "row"}, Nth: intp(90)})
	require.NoError(t, err)
	require.Equal(t, "e90", el.Element.ID)
	n, err = tab.Count(ctx, Locator{Role: "row", Has: &Locator{Role: "button", Name: "Edit"}})
	require.NoError(t, err)
	require.Equal(t, 100, n)
}
