package cdp

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/runtime"
)

// treeRolePages hold one element of each role Chromium's tree gives that
// ARIA has no word for (and of a few it does), each marked with the role
// the tree should give it. A word is on a page once, so {role: word} names
// one element; roles that share a word are on different pages.
var treeRolePages = []string{`<!doctype html><title>roles</title>
<input type=color data-want=ColorWell aria-label=c>
<dl data-want=DescriptionList><dt data-want=term>t</dt><dd data-want=definition>d</dd></dl>
<abbr title=Abbreviation data-want=Abbr>A</abbr>
<details><summary data-want=DisclosureTriangle>S</summary>x</details>
<iframe data-want=Iframe title=f></iframe>
<input type=date data-want=Date aria-label=d><input type=datetime-local data-want=DateTime aria-label=dt><input type=time data-want=InputTime aria-label=t>
<label data-want=LabelText>Lab <input></label>
<fieldset><legend data-want=Legend>Lg</legend></fieldset>
<canvas data-want=Canvas width=10 height=10>fallback <button>b</button></canvas>
<figure><figcaption data-want=Figcaption>F</figcaption></figure>
<video data-want=Video controls width=50 height=20></video><audio data-want=Audio controls></audio>
<ruby data-want=Ruby>r<rt>t</rt></ruby>
<p><mark data-want=mark>m</mark> <time data-want=time>t</time> <code data-want=code>c</code> <em data-want=emphasis>e</em>
<strong data-want=strong>s</strong> <sub data-want=subscript>s</sub> <sup data-want=superscript>s</sup> <ins data-want=insertion>i</ins> <del data-want=deletion>d</del></p>
<table><caption data-want=caption>C</caption><tr><td>1</td></tr></table>
<math data-want=MathMLMath><mfrac data-want=MathMLFraction><mn data-want=MathMLNumber>1</mn><mo data-want=MathMLOperator>+</mo></mfrac><msqrt data-want=MathMLSquareRoot><mi data-want=MathMLIdentifier>x</mi></msqrt></math>
<object data-want=PluginObject width=20 height=20></object><embed data-want=EmbeddedObject type=text/plain width=20 height=20>
<svg data-want=SvgRoot><g><text x=0 y=15>svg text</text></g></svg>
<article><header data-want=sectionheader>h</header><footer data-want=sectionfooter>f</footer></article>`,
	`<!doctype html><title>roles</title>
<iframe role=presentation data-want=IframePresentational></iframe>
<details open><summary data-want=DisclosureTriangle>S</summary>x</details>`,
}

// TestEveryTreeRoleReachable finds each element of treeRolePages by
// {role: roleWord(its tree role)}, and by Chromium's own name for the role
// in its spelling and lower-cased.
func TestEveryTreeRoleReachable(t *testing.T) {
	ctx := tctx(t, 60*time.Second)
	seen := map[string]bool{}
	for i, html := range treeRolePages {
		tab := newTab(t, serve("/roles-reachable-"+string(rune('a'+i)), html))
		want, treeRoles := markedTreeRoles(t, tab)
		for j, role := range treeRoles {
			if role != want[j] {
				t.Errorf("page %d: the tree gives the element marked %s the role %q", i, want[j], role)
				continue
			}
			seen[role] = true
			names := []string{roleWord(role), role, strings.ToLower(role), strings.ToUpper(role)}
			for _, w := range slices.Compact(names) {
				el, err := tab.Resolve(ctx, Locator{Role: w})
				if err != nil {
					t.Errorf("page %d: {role: %q} (tree role %s): %v", i, w, role, err)
					continue
				}
				got, _, err := tab.Attribute(ctx, Locator{Ref: el.Ref}, "data-want")
				if err != nil || got != role {
					t.Errorf("page %d: {role: %q} found %s (marked %q, %v), want the %s", i, w, el.Element, got, err, role)
				}
			}
		}
	}
	// A word of roleTable that another word shares is found too.
	tab := newTab(t, serve("/roles-reachable-alias", treeRolePages[1]))
	if _, err := tab.Resolve(ctx, Locator{Role: "summary"}); err != nil {
		t.Errorf(`{role: "summary"}: %v`, err)
	}
	for _, r := range []string{"ColorWell", "DescriptionList", "Abbr", "DisclosureTriangle", "Iframe", "IframePresentational",
		"Date", "DateTime", "InputTime", "LabelText", "Legend", "Canvas", "Figcaption", "Video", "Audio", "Ruby", "MathMLMath"} {
		if !seen[r] {
			t.Errorf("no element of role %s was looked up", r)
		}
	}
}

// markedTreeRoles reads, for each element with data-want in document
// order, the mark and the role Chromium's tree gives it.
func markedTreeRoles(t *testing.T, tab *Tab) (want, roles []string) {
	t.Helper()
	ctx := tctx(t, 20*time.Second)
	c := tab.Client()
	r, err := c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(`Array.from(document.querySelectorAll("[data-want]"))`).SetObjectGroup("roles"))
	if err != nil || r.Result.ObjectID == nil {
		t.Fatalf("marked elements: %v", err)
	}
	props, err := c.Runtime.GetProperties(ctx, runtime.NewGetPropertiesArgs(*r.Result.ObjectID).SetOwnProperties(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range props.Result {
		if p.Value == nil || p.Value.ObjectID == nil || p.Value.Subtype == nil || *p.Value.Subtype != "node" {
			continue
		}
		a, err := c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(`function () { return this.dataset.want; }`).
			SetObjectID(*p.Value.ObjectID).SetReturnByValue(true))
		if err != nil {
			t.Fatal(err)
		}
		pt, err := c.Accessibility.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().
			SetObjectID(*p.Value.ObjectID).SetFetchRelatives(false))
		if err != nil || len(pt.Nodes) == 0 {
			t.Fatalf("tree node: %v", err)
		}
		role := axString(pt.Nodes[0].Role)
		if pt.Nodes[0].Ignored {
			role = "(ignored)"
		}
		want = append(want, strings.Trim(string(a.Result.Value), `"`))
		roles = append(roles, role)
	}
	return want, roles
}

// TestRoleWordRoundTrip: the word roleWord gives for any tree role leads
// axQuery back to that role, and so does Chromium's name for it in any
// case, including a name roleTable does not list.
func TestRoleWordRoundTrip(t *testing.T) {
	var tree []string
	for _, e := range roleTable {
		tree = append(tree, e.tree...)
	}
	tree = append(tree, "button", "heading", "generic", "FutureRoleOfChromium")
	for _, r := range tree {
		for _, w := range []string{roleWord(r), r, strings.ToLower(r), strings.ToUpper(r), " " + r + " "} {
			if r == "FutureRoleOfChromium" && strings.TrimSpace(w) != r {
				continue // an unlisted name is taken as written, not in another case
			}
			roles, _ := axQuery(Locator{Role: w})
			if !slices.Contains(roles, r) {
				t.Errorf("{role: %q} asks the tree for %v, not %q", w, roles, r)
			}
		}
		if w := roleWord(r); w != strings.ToLower(w) && r != "FutureRoleOfChromium" {
			t.Errorf("roleWord(%q) = %q, not a lower-case word", r, w)
		}
	}
	for tr, w := range map[string]string{"image": "img", "RootWebArea": "document", "DescriptionListTerm": "term",
		"DescriptionListDetail": "definition", "ColorWell": "colorwell", "Iframe": "iframe", "IframePresentational": "iframe"} {
		if got := roleWord(tr); got != w {
			t.Errorf("roleWord(%q) = %q, want %q", tr, got, w)
		}
	}
}
