package cdp

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/errcode"
)

// accnamePage holds cases of the accessible-name computation, each element
// with the id a test expects.
const accnamePage = `<!doctype html><title>accname</title>
<style>.gen::before { content: "Generated "; } .after::after { content: " label"; }</style>
<span id=l1>Billing</span><span id=l2>address</span>
<input id=labelledby aria-labelledby="l1 l2">
<span id=chainA aria-labelledby="chainB">not me</span><span id=chainB>Chained</span>
<input id=chain aria-labelledby="chainA">
<label for=embedded>Deliver every <select><option>2</option><option selected>3</option></select> days</label><input id=embedded>
<button id=genbtn class=gen>button</button>
<label class=after for=aftr>Postcode</label><input id=aftr>
<button id=hiddenpart>Visible<span aria-hidden=true> hidden</span><span style="display:none"> gone</span></button>
<input id=titled title="Search the site">
<input id=submit type=submit>
<input id=reset type=reset>
<input id=file type=file aria-label="Upload a file">
<nav id=nav aria-label="Primary"><a href="/a">Home</a></nav>
<main id=main>main</main>
<ul id=list><li>a</li></ul>
<table id=table aria-label="Prices"><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>1</td></tr></table>
<img id=logo alt="Company logo" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<button id=case>Save Draft</button><button id=caseother>Save</button>
<div id=host></div><div id=closed></div>
<x-field id=slotted><label slot=label for=sl>Slotted name</label></x-field>
<script>
const open = document.getElementById("host").attachShadow({ mode: "open" });
open.innerHTML = '<label for=s>Shadow email</label><input id=s><button id=sb>Shadow send</button>';
const closed = document.getElementById("closed").attachShadow({ mode: "closed" });
closed.innerHTML = '<input id=cs aria-label="Closed phone">';
customElements.define("x-field", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML = '<slot name=label></slot><input id=sl aria-labelledby=lbl><span id=lbl>Slotted name</span>'; }
});
</script>`

func TestAXRolesAndNames(t *testing.T) {
	tab := newTabWith(t, serve("/accname", accnamePage), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	cases := []struct {
		target Locator
		id     string
	}{
		{Locator{Role: "textbox", Name: "Billing address"}, "labelledby"},
		{Locator{Label: "Billing address"}, "labelledby"},
		{Locator{Role: "textbox", Name: "not me", Exact: true}, "chain"}, // labelledby is not followed twice
		{Locator{Label: "Deliver every 3 days"}, "embedded"},
		{Locator{Role: "button", Name: "Generated button"}, "genbtn"},
		{Locator{Label: "Postcode label"}, "aftr"},
		{Locator{Role: "button", Name: "Visible", Exact: true}, "hiddenpart"},
		{Locator{Role: "textbox", Name: "Search the site"}, "titled"},
		{Locator{Role: "button", Name: "Submit"}, "submit"},
		{Locator{Role: "button", Name: "Reset"}, "reset"},
		{Locator{Role: "button", Name: "Upload a file"}, "file"},
		{Locator{Role: "navigation", Name: "Primary"}, "nav"},
		{Locator{Role: "main"}, "main"},
		{Locator{Role: "list"}, "list"},
		{Locator{Role: "table", Name: "prices"}, "table"},
		{Locator{Role: "img", Name: "Company logo"}, "logo"},
		{Locator{Role: "button", Name: "save draft"}, "case"}, // case-insensitive
		{Locator{Role: "button", Name: "Save"}, "caseother"},  // whole beats part
		{Locator{Role: "button", Name: "Save", Exact: true}, "caseother"},
		{Locator{Label: "Shadow email"}, "s"}, // open shadow root
		{Locator{Role: "button", Name: "Shadow send"}, "sb"},
		{Locator{Label: "Closed phone"}, "cs"}, // closed shadow root
		{Locator{Role: "textbox", Name: "Slotted name"}, "sl"},
	}
	for _, c := range cases {
		el, err := tab.pickIn(ctx, "", c.target, false)
		if err != nil {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		if el.Element.ID != c.id {
			t.Errorf("%s: resolved %+v, want #%s", c.target, el.Element, c.id)
		}
	}
}

func TestAXMisses(t *testing.T) {
	tab := newTabWith(t, serve("/accname", accnamePage), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	_, err := tab.pickIn(ctx, "", Locator{Role: "button", Name: "Sav draft"}, false)
	var te *LocatorError
	if !errors.As(err, &te) || te.Code != "not_found" {
		t.Fatalf("a name nobody has: %v", err)
	}
	if !strings.Contains(te.Error(), `"Save Draft"`) {
		t.Errorf("the error names the candidates that came close: %s", te.Message)
	}
	_, err = tab.pickIn(ctx, "", Locator{Role: "button", Name: "save", Exact: true}, false)
	if !errors.Is(err, errcode.NotFound) {
		t.Errorf("exact is case-sensitive: %v", err)
	}
	_, err = tab.pickIn(ctx, "", Locator{Role: "button", Name: "Shadow"}, false)
	if err != nil {
		t.Errorf("a part of one name: %v", err)
	}
	_, err = tab.pickIn(ctx, "", Locator{Role: "button"}, false)
	if !errors.Is(err, errcode.Ambiguous) {
		t.Errorf("many buttons: %v", err)
	}
	other := attachWith(t, tab, TabOptions{Sites: []string{"example.com"}})
	if _, err := other.pickIn(ctx, "", Locator{Role: "main"}, false); !errors.Is(err, errcode.SiteNotAllowed) {
		t.Errorf("sites apply to the lookup: %v", err)
	}
}

// samenamePage repeats names the ways real pages do: many rows of text,
// links named only by their image, and a label that names a button.
func samenamePage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>same names</title><table>`)
	for i := range 40 {
		b.WriteString(`<tr><td><div><span>Order ` + string(rune('A'+i%26)) + `</span></div></td><td><div><span><button>Remove</button></span></div></td></tr>`)
	}
	b.WriteString(`</table>
<a href="/a" id=img1><img alt="Delete" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></a>
<a href="/b" id=img2><img alt="Delete" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></a>
<a href="/c" id=text1>Delete</a>
<label for=lb>Send</label><button id=lb>Go</button><button id=sendtext>Send</button>
<section><button>Archive</button></section>`)
	for range 80 {
		b.WriteString(`<div><p><span>Archive this</span></p></div>`)
	}
	b.WriteString(`<section><button>Archive</button></section>`)
	return b.String()
}

// A name several elements share is ambiguous however each got it, and
// however many there are: the quick look at likely elements may make the
// lookup faster, never pick one of many.
func TestAXNeverGuesses(t *testing.T) {
	tab := newTabWith(t, serve("/samename", samenamePage()), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	for _, c := range []struct {
		loc  Locator
		want int
	}{
		{Locator{Role: "button", Name: "Remove"}, 40},
		{Locator{Role: "link", Name: "Delete"}, 3},
		{Locator{Role: "button", Name: "Send"}, 2},
		{Locator{Role: "button", Name: "Archive", Exact: true}, 2}, // past the quick look's limit
	} {
		_, err := tab.pickIn(ctx, "", c.loc, false)
		var le *LocatorError
		if !errors.As(err, &le) || le.Code != errcode.Ambiguous {
			t.Errorf("%s: want ambiguous, got %v", c.loc, err)
			continue
		}
		if !strings.Contains(le.Message, fmt.Sprint(c.want)) {
			t.Errorf("%s: the error counts the %d matches: %s", c.loc, c.want, le.Message)
		}
	}
}

// A label nobody has is a miss that says how many fields have labels and
// names the few closest, by likeness, never what the fields hold.
func TestLabelMissNamesTheClosestLabels(t *testing.T) {
	page := `<!doctype html><label>Email <input id=a value="ada@example.org"></label>
<label for=b>Email again</label><input id=b value="ada2@example.org">
<label for=c>Phone</label><input id=c value="0123">
<label for=d>Postcode</label><input id=d>`
	tab := newTabWith(t, serve("/label-miss", page), TabOptions{})
	ctx := tctx(t, 30*time.Second)
	_, err := tab.pickIn(ctx, "", Locator{Label: "E-mail address"}, false)
	var te *LocatorError
	if !errors.As(err, &te) || te.Code != errcode.NotFound {
		t.Fatalf("a label nobody has: %v", err)
	}
	msg := te.Error()
	if !strings.Contains(msg, `no field with that label; 4 fields have labels; the closest are: <textbox> label "Email", <textbox> label "Email again"`) {
		t.Errorf("the miss counts the labels and names the closest first: %s", msg)
	}
	for _, never := range []string{"Phone", "Postcode", "ada@example.org", "0123"} {
		if strings.Contains(msg, never) {
			t.Errorf("the miss names %q: %s", never, msg)
		}
	}
}

// A wait that runs out says how long it waited, for what, and what it
// last saw.
func TestWaitTimeoutSaysWhatItSaw(t *testing.T) {
	tab := newTabWith(t, serve("/empty", `<p>nothing here</p>`), TabOptions{})
	ctx := tctx(t, 300*time.Millisecond)
	err := tab.WaitFor(ctx, Selector("#never"))
	if !errors.Is(err, errcode.Timeout) {
		t.Fatalf("want a timeout, got %v", err)
	}
	if !strings.Contains(err.Error(), `waited 3`) || !strings.Contains(err.Error(), `ms for selector "#never"; last seen: no element matches it`) {
		t.Errorf("the timeout names how long, what and what was seen: %v", err)
	}
}

// treeNamedPage has names the tree gives elements that a look at the DOM
// alone does not tie to them: text many levels below its button, text
// slotted into a button of a closed shadow root, and a label a script set
// as an element (ariaLabelledByElements, no ids). Each name is shared with
// a plain button, so a lookup that misses the other element picks one of
// two.
const treeNamedPage = `<!doctype html><title>tree-named</title>
<button id=deep><span><span><span><span><span><span><span>Save draft</span></span></span></span></span></span></span></button>
<button id=shallow>Save draft</button>
<x-send id=slottedbtn>Send now</x-send>
<button id=plainsend>Send now</button>
<x-pay id=pay>Pay the bill</x-pay>
<span id=arch>Archive all</span><div id=reflected role=button tabindex=0>x</div><button>Archive all</button>
<script>
document.getElementById("reflected").ariaLabelledByElements = [document.getElementById("arch")];
for (const name of ["x-send", "x-pay"]) customElements.define(name, class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "closed" }).innerHTML = "<div><div><button><slot></slot></button></div></div>"; }
});
</script>`

// The elements a {role, name} lookup weighs are named by the tree, however
// far the name's text is from them and across shadow roots.
func TestAXCandidatesNamedByTree(t *testing.T) {
	tab := newTabWith(t, serve("/tree-named", treeNamedPage), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	for _, loc := range []Locator{
		{Role: "button", Name: "Save draft"},
		{Role: "button", Name: "Save draft", Exact: true},
		{Role: "button", Name: "Send now", Exact: true},
		{Role: "button", Name: "send"},
		{Role: "button", Name: "Archive all", Exact: true},
	} {
		_, err := tab.pickIn(ctx, "", loc, false)
		var le *LocatorError
		if !errors.As(err, &le) || le.Code != errcode.Ambiguous || !strings.Contains(le.Message, "2") {
			t.Errorf("%s: want ambiguous between 2, got %v", loc, err)
		}
	}
	el, err := tab.pickIn(ctx, "", Locator{Role: "button", Name: "Pay the bill", Exact: true}, false)
	if err != nil || el.Element.Tag != "button" {
		t.Errorf("the button in a closed shadow root: %+v %v", el, err)
	}
}

// issueNamesPage holds names a look at the DOM reads otherwise than the
// browser: an embedded control's value, aria-labelledby through a hidden
// node, hidden descendants, runs of white space, date and time inputs
// (textbox to a script), and title naming an image and a link.
const issueNamesPage = `<!doctype html><title>issue names</title>
<input type=checkbox id=emb><label for=emb>Remind me <select><option>1</option><option selected>2</option></select> days before</label>
<span id=hid hidden>Secret code</span><input id=lbh aria-labelledby=hid>
<button id=hd>Pay <span hidden>twice </span><span style="display:none">again </span>now</button>
<button id=ws>Check
      	  out</button>
<input type=date id=d aria-label="Start day"><input type=time id=tm aria-label="Start time">
<input type=month id=mo aria-label="Card month"><input type=week id=wk aria-label="Sprint week">
<input type=datetime-local id=dtl aria-label="Meeting at">
<img id=ti title="Company mark" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width=10 height=10>
<a id=tl href="#top" title="Top of page" style="display:inline-block;width:10px;height:10px"></a>`

// Each is found by the quick look, named by the tree, without the walk of
// the whole tree.
func TestAXFastNamesAsTheTree(t *testing.T) {
	tab := newTabWith(t, serve("/issue-names", issueNamesPage), TabOptions{})
	ctx := tctx(t, 60*time.Second)
	for _, c := range []struct {
		loc Locator
		id  string
	}{
		{Locator{Role: "checkbox", Name: "Remind me 2 days before", Exact: true}, "emb"},
		{Locator{Role: "textbox", Name: "Secret code", Exact: true}, "lbh"},
		{Locator{Role: "button", Name: "Pay now", Exact: true}, "hd"},
		{Locator{Role: "button", Name: "Check out", Exact: true}, "ws"},
		{Locator{Role: "textbox", Name: "Start day", Exact: true}, "d"},
		{Locator{Role: "textbox", Name: "Start time", Exact: true}, "tm"},
		{Locator{Role: "textbox", Name: "Card month", Exact: true}, "mo"},
		{Locator{Role: "textbox", Name: "Sprint week", Exact: true}, "wk"},
		{Locator{Role: "textbox", Name: "Meeting at", Exact: true}, "dtl"},
		{Locator{Role: "img", Name: "Company mark", Exact: true}, "ti"},
		{Locator{Role: "link", Name: "Top of page", Exact: true}, "tl"},
		{Locator{Role: "link", Name: "top of"}, "tl"},
	} {
		lk, err := tab.newLookup(ctx, "", c.loc)
		if err != nil {
			t.Fatal(err)
		}
		roles, want := axQuery(c.loc)
		objs, err := tab.axFast(ctx, lk.c, lk.uid, lk.world, lk.group, roles, want, c.loc.Exact)
		lk.close(ctx)
		if err != nil || len(objs) != 1 {
			t.Errorf("%s: the quick look answered %d elements, %v", c.loc, len(objs), err)
		}
		el, err := tab.pickIn(ctx, "", c.loc, false)
		if err != nil || el.Element.ID != c.id {
			t.Errorf("%s: resolved %+v, %v; want #%s", c.loc, el.Element, err, c.id)
		}
	}
}
