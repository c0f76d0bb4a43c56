package cdp

import (
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// shadowPage builds its fields inside components: open and closed shadow
// roots, nested ones, slots carrying labels and text, and ids repeated
// across trees.
const shadowPage = `<!doctype html><title>shadow</title>
<span id=lbl>Wrong city</span>
<x-labelled id=email-host><span slot=label>Email</span></x-labelled>
<x-bare id=phone-host><label slot=label>Phone</label></x-bare>
<label for=zip-host>Zip code</label><x-bare id=zip-host></x-bare>
<x-city id=city-host></x-city>
<x-outer id=outer></x-outer>
<x-button id=save>Save</x-button>
<x-closed id=closed><label slot=label>Secret word</label></x-closed>
<div id=cover-host></div>
<script>
customElements.define("x-labelled", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML =
    '<label for=i><slot name=label>Fallback</slot></label><input id=i name=email><button>clear</button>'; }
});
customElements.define("x-bare", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML =
    '<div class=wrap><slot name=label></slot><input class=f></div><button aria-label=toggle>?</button>'; }
});
customElements.define("x-city", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML =
    '<span id=lbl>City</span><input aria-labelledby=lbl id=city placeholder="Your town" data-testid=city-field>'; }
});
customElements.define("x-inner", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML =
    '<p id=deep-text>Deep inside</p><input id=deep name=deep-field>'; }
});
customElements.define("x-outer", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML = '<x-inner></x-inner>'; }
});
customElements.define("x-button", class extends HTMLElement {
  constructor() { super(); this.attachShadow({ mode: "open" }).innerHTML =
    '<button id=b style="padding:8px"><slot></slot></button>';
    this.shadowRoot.getElementById("b").addEventListener("click", () => { this.dataset.clicks = (+this.dataset.clicks || 0) + 1; }); }
});
customElements.define("x-closed", class extends HTMLElement {
  constructor() { super(); const r = this.attachShadow({ mode: "closed" });
    r.innerHTML = '<slot name=label></slot><input id=secret aria-label="Closed field">'; window.closedRoot = r; }
});
const cover = document.getElementById("cover-host").attachShadow({ mode: "open" });
cover.innerHTML = '<button id=covered>Covered</button>';
</script>`

func TestShadowFinders(t *testing.T) {
	tab := newTab(t, serve("/shadow", shadowPage))
	ctx := tctx(t, 30*time.Second)
	id := func(loc Locator) string {
		t.Helper()
		el, err := tab.Resolve(ctx, loc)
		require.NoError(t, err, loc.String())
		return el.Element.ID + "/" + el.Element.Tag + "/" + el.Element.Name
	}
	// Through the runtime's own finders (selector, testId, placeholder,
	// name, text) and the label fallback.
	require.Equal(t, "i/input/email", id(Locator{Label: "Email"}))     // a slotted label text inside the component's <label for>
	require.Equal(t, "/input/", id(Locator{Label: "Phone"}))           // a light-DOM <label> slotted into a one-field component
	require.Equal(t, "/input/", id(Locator{Label: "Zip code"}))        // <label for> naming the host
	require.Equal(t, "city/input/", id(Locator{Label: "City"}))        // aria-labelledby resolved in the field's own root
	require.Equal(t, "city/input/", id(Locator{Placeholder: "town"}))  //
	require.Equal(t, "city/input/", id(Locator{TestID: "city-field"})) //
	require.Equal(t, "deep/input/deep-field", id(Locator{Name: "deep-field"}))
	require.Equal(t, "deep/input/deep-field", id(Locator{Selector: "input#deep"}))
	require.Equal(t, "deep-text/p/", id(Locator{Text: "Deep inside"}))
	require.Equal(t, "save/x-button/", id(Locator{Text: "Save"})) // slotted text stays on the host
	require.Equal(t, "b/button/", id(Locator{Role: "button", Name: "Save"}))

	// The runtime's own label and role readings (the fallback for what the
	// accessibility tree does not name) see the same.
	for target, want := range map[Locator]string{
		{Label: "Email"}: "i", {Label: "City"}: "city", {Role: "button", Name: "Save"}: "b", {Role: "textbox", Name: "City"}: "city",
	} {
		var el Element
		require.NoError(t, tab.formCall(ctx, target.String(), &el, "resolve", target), target.String())
		require.Equal(t, want, el.Element.ID, target.String())
	}
	var city Element
	require.NoError(t, tab.formCall(ctx, "", &city, "resolve", Locator{Label: "City"}))
	require.Equal(t, "City", city.Element.Label, "the id is looked up in the field's own root, not the document")

	// A selector is matched in each tree on its own: no combinator
	// crosses into a shadow root.
	_, err := tab.Resolve(ctx, Locator{Selector: "x-outer input"})
	require.ErrorIs(t, err, errcode.NotFound)
	_, err = tab.Resolve(ctx, Locator{Selector: "input"})
	require.ErrorIs(t, err, errcode.Ambiguous)

	// Fill, click and check work on fields inside shadow roots: focus,
	// read-back and the hit test look in the element's own tree.
	st, err := tab.Fill(ctx, Locator{Label: "Email"}, "ada@example.com", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "ada@example.com", st.Value)
	_, err = tab.Fill(ctx, Locator{Name: "deep-field"}, "nested", FormOptions{})
	require.NoError(t, err)
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Save"}, FormOptions{}))
	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Save"}, FormOptions{}))
	v, err := tab.Evaluate(ctx, `() => [document.getElementById("save").dataset.clicks,
		document.getElementById("email-host").shadowRoot.getElementById("i").value,
		document.querySelector("x-outer").shadowRoot.querySelector("x-inner").shadowRoot.getElementById("deep").value]`)
	require.NoError(t, err)
	require.JSONEq(t, `["2", "ada@example.com", "nested"]`, string(v))

	// A closed root is out of the runtime's sight; the accessibility tree
	// finds it (see ax.go), and its elements, once adopted, are acted on.
	_, err = tab.Resolve(ctx, Locator{Selector: "#secret"})
	require.ErrorIs(t, err, errcode.NotFound)
}

// TestShadowHitTest: an overlay in the document over a field inside a
// shadow root makes a click wait, and fail obscured naming it.
func TestShadowHitTest(t *testing.T) {
	tab := newTab(t, serve("/shadow-cover", shadowPage+`<div id=veil style="position:fixed;inset:0;background:rgba(0,0,0,.2)"></div>`))
	ctx := tctx(t, 30*time.Second)
	// The first lookup builds the runtime; the wait below is about the
	// cover, so it starts with the runtime there.
	_, err := tab.Resolve(ctx, Locator{Role: "button", Name: "Covered"})
	require.NoError(t, err)
	short := tctx(t, 800*time.Millisecond)
	err = tab.ClickElement(short, Locator{Role: "button", Name: "Covered"}, FormOptions{})
	require.ErrorIs(t, err, errcode.Obscured)
	require.Contains(t, err.Error(), `id="veil"`)
	var te *LocatorError
	require.ErrorAs(t, err, &te)
	require.Greater(t, te.Waited, 300*time.Millisecond)
	_, err = tab.Evaluate(ctx, `() => document.getElementById("veil").remove()`)
	require.NoError(t, err)
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Covered"}, FormOptions{}))
}

// TestClosedShadowAdopt hands the runtime an element inside a closed shadow root,
// as the accessibility-tree lookup does, and acts on it by its ref.
func TestClosedShadowAdopt(t *testing.T) {
	tab := newTab(t, serve("/shadow-closed", shadowPage))
	ctx := tctx(t, 30*time.Second)
	_, err := tab.Resolve(ctx, Locator{Selector: "x-closed"}) // the world exists
	require.NoError(t, err)
	tab.frames.mu.Lock()
	world := tab.frames.realms.worldID
	tab.frames.mu.Unlock()
	require.NotZero(t, world)
	doc, err := tab.c.DOM.GetDocument(ctx, dom.NewGetDocumentArgs().SetDepth(-1).SetPierce(true))
	require.NoError(t, err)
	var secret *dom.Node
	var walk func(n *dom.Node)
	walk = func(n *dom.Node) {
		for i := range n.Attributes {
			if i%2 == 0 && n.Attributes[i] == "id" && n.Attributes[i+1] == "secret" {
				secret = n
			}
		}
		for i := range n.Children {
			walk(&n.Children[i])
		}
		for i := range n.ShadowRoots {
			walk(&n.ShadowRoots[i])
		}
	}
	walk(&doc.Root)
	require.NotNil(t, secret)
	obj, err := tab.c.DOM.ResolveNode(ctx, dom.NewResolveNodeArgs().SetBackendNodeID(secret.BackendNodeID).SetExecutionContextID(runtime.ExecutionContextID(world)))
	require.NoError(t, err)
	target := Locator{Label: "Closed field"}
	lk, err := tab.newLookup(ctx, "", target)
	require.NoError(t, err)
	defer lk.close(ctx)
	f, err := lk.adopt(ctx, []runtime.RemoteObjectID{*obj.Object.ObjectID}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, f.N)
	el, err := lk.pick(ctx, f, target, false)
	require.NoError(t, err)
	require.Equal(t, "secret", el.Element.ID)
	require.Equal(t, "Closed field", el.Element.Label)

	st, err := tab.Fill(ctx, Locator{Ref: el.Ref}, "hidden away", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "hidden away", st.Value)
	require.NoError(t, tab.ClickElement(ctx, Locator{Ref: el.Ref}, FormOptions{}))
	v, err := tab.Evaluate(ctx, `() => closedRoot.getElementById("secret").value`)
	require.NoError(t, err)
	require.JSONEq(t, `"hidden away"`, string(v))

	// End to end: the accessibility tree finds the closed field by its
	// label, and the action waits, hit-tests and types in its root.
	st, err = tab.Fill(ctx, Locator{Label: "Closed field"}, "found by name", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "found by name", st.Value)

	// Adopted elements are picked by resolve's rules: none is not_found.
	f, err = lk.adopt(ctx, nil, nil)
	require.NoError(t, err)
	require.Zero(t, f.N)
	_, err = lk.pick(ctx, f, target, false)
	require.ErrorIs(t, err, errcode.NotFound)
}
