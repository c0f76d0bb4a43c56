package cdp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

const labelsPage = `<title>labels</title>
<label for=email>Email</label><input id=email>
<label for=e2>Email confirmation</label><input id=e2>
<label>Phone <input id=phone></label>
<input id=search aria-label="Search site">
<span id=zl>Zip code</span><input id=zip aria-labelledby=zl>
<label for=n1>Name</label><input id=n1> <label for=n2>Name</label><input id=n2>
<label for=h>Hidden one</label><input id=h style="display:none">
<label for=d>Disabled one</label><input id=d disabled>
<label for=nick>Nickname</label><input id=nick name=nick> <input id=nick2 name=nick style="display:none">
<input placeholder="Your city" id=city>
<button id=save>Save</button>
<p data-testid=msg id=msg>Saved <b>now</b></p>
<div id=box><input id=gone aria-label="Going away"></div>`

func TestResolveTargets(t *testing.T) {
	tab := newTab(t, serve("/labels", labelsPage))
	ctx := tctx(t, 20*time.Second)
	cases := []struct {
		target Locator
		id     string
	}{
		{Locator{Label: "Email"}, "email"}, // exact wins over "Email confirmation"
		{Locator{Label: "email"}, "email"},
		{Locator{Label: "confirmation"}, "e2"}, // substring when nothing is exact
		{Locator{Label: "Phone"}, "phone"},     // wrapping label
		{Locator{Label: "Search site"}, "search"},
		{Locator{Label: "Zip code"}, "zip"}, // aria-labelledby
		{Locator{Placeholder: "city"}, "city"},
		{Locator{Name: "nick"}, "nick"}, // the hidden twin is skipped, and reported
		{Locator{Role: "button", Name: "Save"}, "save"},
		{Locator{Role: "textbox", Name: "Nickname"}, "nick"},
		{Locator{Text: "Saved now"}, "msg"},
		{Locator{TestID: "msg"}, "msg"},
		{Locator{Selector: "#city"}, "city"},
	}
	for _, c := range cases {
		el, err := tab.Resolve(ctx, c.target)
		require.NoError(t, err, c.target.String())
		require.Equal(t, c.id, el.Element.ID, c.target.String())
		require.NotEmpty(t, el.Ref)
		again, err := tab.Resolve(ctx, Locator{Ref: el.Ref})
		require.NoError(t, err)
		require.Equal(t, c.id, again.Element.ID)
	}
	el, err := tab.Resolve(ctx, Locator{Name: "nick"})
	require.NoError(t, err)
	require.Len(t, el.Skipped, 1)
	require.True(t, el.Skipped[0].Hidden)

	_, err = tab.Resolve(ctx, Locator{Label: "Name"})
	require.ErrorIs(t, err, errcode.Ambiguous)
	var te *LocatorError
	require.ErrorAs(t, err, &te)
	require.Len(t, te.Candidates, 2)
	require.Contains(t, err.Error(), `id="n1"`)
	require.Contains(t, err.Error(), `id="n2"`)

	_, err = tab.Resolve(ctx, Locator{Label: "Hidden one"})
	require.ErrorIs(t, err, errcode.Hidden)
	_, err = tab.Resolve(ctx, Locator{Label: "Disabled one"})
	require.ErrorIs(t, err, errcode.Disabled)
	_, err = tab.Resolve(ctx, Locator{Label: "No such field"})
	require.ErrorIs(t, err, errcode.NotFound)
	_, err = tab.Resolve(ctx, Locator{Label: "Email", Selector: "#x"})
	require.ErrorIs(t, err, errcode.BadTarget)
	_, err = tab.Resolve(ctx, Locator{})
	require.ErrorIs(t, err, errcode.BadTarget)
	_, err = tab.Resolve(ctx, Locator{Selector: "##"})
	require.ErrorIs(t, err, errcode.BadTarget)

	// Re-render: the element is replaced, its ref goes stale.
	el, err = tab.Resolve(ctx, Locator{Label: "Going away"})
	require.NoError(t, err)
	_, err = tab.Evaluate(ctx, `() => { document.getElementById("box").innerHTML = '<input id=gone aria-label="Going away">' }`)
	require.NoError(t, err)
	_, err = tab.Fill(ctx, Locator{Ref: el.Ref}, "x", FormOptions{})
	require.ErrorIs(t, err, errcode.StaleRef)
	require.Contains(t, err.Error(), "resolve the target again")

	// Navigation: even a same-looking document does not accept old refs.
	el, err = tab.Resolve(ctx, Locator{Label: "Email"})
	require.NoError(t, err)
	_, err = tab.Goto(ctx, site.URL+"/labels?again", Load)
	require.NoError(t, err)
	_, err = tab.Resolve(ctx, Locator{Ref: el.Ref})
	require.ErrorIs(t, err, errcode.StaleRef)
}

// trustedPage holds a field that, like a controlled input in a UI
// framework, keeps its own state and only takes trusted input events; any
// other write is reverted.
const trustedPage = `<title>trusted</title>
<label for=f>Card holder</label><input id=f>
<script>
let state = "";
const f = document.getElementById("f");
f.addEventListener("input", e => { if (e.isTrusted) state = f.value; else f.value = state; });
f.addEventListener("blur", () => { f.value = state; });
window.stateOf = () => state;
</script>`

func TestFillTrustedOnlyInput(t *testing.T) {
	tab := newTab(t, serve("/trusted", trustedPage))
	ctx := tctx(t, 20*time.Second)

	// The synthetic way (what many drivers do) does not stick here.
	v, err := tab.Evaluate(ctx, `(v) => {
		const f = document.getElementById("f");
		f.value = v;
		f.dispatchEvent(new Event("input", { bubbles: true }));
		f.dispatchEvent(new Event("change", { bubbles: true }));
		return [f.value, stateOf()];
	}`, "Ada Lovelace")
	require.NoError(t, err)
	require.JSONEq(t, `["", ""]`, string(v))

	st, err := tab.Fill(ctx, Locator{Label: "Card holder"}, "Ada Lovelace", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Ada Lovelace", st.Value)
	v, err = tab.Evaluate(ctx, `() => [document.getElementById("f").value, stateOf(), document.activeElement.id]`)
	require.NoError(t, err)
	require.JSONEq(t, `["Ada Lovelace", "Ada Lovelace", ""]`, string(v), "value kept, state updated, field left")

	// Refilling replaces the old text, quotes and all.
	st, err = tab.Fill(ctx, Locator{Label: "Card holder"}, `O'Brien "x" </script>`, FormOptions{})
	require.NoError(t, err)
	require.Equal(t, `O'Brien "x" </script>`, st.Value)
	st, err = tab.Fill(ctx, Locator{Label: "Card holder"}, "", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "", st.Value)
}

func TestFillMaxLengthNotCommitted(t *testing.T) {
	tab := newTab(t, serve("/maxlength", `<label for=z>Zip</label><input id=z maxlength=5>`))
	ctx := tctx(t, 20*time.Second)
	_, err := tab.Fill(ctx, Locator{Label: "Zip"}, "1234567", FormOptions{})
	require.ErrorIs(t, err, errcode.NotCommitted)
	var nc *NotCommittedError
	require.ErrorAs(t, err, &nc)
	require.Equal(t, "12345", nc.Kept)
	require.NotContains(t, err.Error(), "12345", "the error text does not carry values")
}

func TestFillReportsValidationOnBlur(t *testing.T) {
	tab := newTab(t, serve("/validate", `<form>
<label for=em>Email</label><input id=em type=email aria-describedby=em-hint>
<span id=em-hint></span>
<label for=age>Age</label><input id=age aria-errormessage=age-err><span id=age-err></span>
</form><script>
const em = document.getElementById("em");
em.addEventListener("blur", () => {
	document.getElementById("em-hint").textContent = em.checkValidity() ? "" : "Enter a valid email";
});
const age = document.getElementById("age");
age.addEventListener("blur", () => {
	const bad = !/^\d+$/.test(age.value);
	age.setAttribute("aria-invalid", String(bad));
	document.getElementById("age-err").textContent = bad ? "Age must be a number" : "";
});
</script>`))
	ctx := tctx(t, 20*time.Second)
	st, err := tab.Fill(ctx, Locator{Label: "Email"}, "not-an-email", FormOptions{})
	require.NoError(t, err)
	require.True(t, st.Invalid)
	require.NotEmpty(t, st.ValidationMessage)
	require.Equal(t, "Enter a valid email", st.ErrorText)

	st, err = tab.Fill(ctx, Locator{Label: "Email"}, "ada@example.com", FormOptions{})
	require.NoError(t, err)
	require.False(t, st.Invalid)
	require.Empty(t, st.ErrorText)

	st, err = tab.Fill(ctx, Locator{Label: "Age"}, "forty", FormOptions{})
	require.NoError(t, err)
	require.True(t, st.Invalid)
	require.Equal(t, "Age must be a number", st.ErrorText)
	st, err = tab.Fill(ctx, Locator{Label: "Age"}, "40", FormOptions{})
	require.NoError(t, err)
	require.False(t, st.Invalid)
}

func TestFormsIgnorePageTampering(t *testing.T) {
	tab := newTab(t, serve("/hostile", `<label for=q>Query</label><input id=q>
<select id=s aria-label=Size><option>Small</option><option>Large</option></select>
<script>
Array.prototype.map = function () { throw new Error("tampered map") };
Array.prototype.filter = function () { return [] };
Array.from = function () { return [] };
Element.prototype.querySelector = function () { return null };
Element.prototype.querySelectorAll = function () { return [] };
Document.prototype.querySelectorAll = function () { return [] };
HTMLElement.prototype.focus = function () {};
JSON.stringify = function () { return "{}" };
</script>`))
	ctx := tctx(t, 20*time.Second)
	// The page really is broken for its own code.
	_, err := tab.Evaluate(ctx, `() => [1].map(x => x)`)
	var ee *EvalError
	require.ErrorAs(t, err, &ee)

	st, err := tab.Fill(ctx, Locator{Label: "Query"}, "hello", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "hello", st.Value)
	shown, err := tab.Select(ctx, Locator{Label: "Size"}, "Large", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Large", shown)
}

const choicesPage = `<title>choices</title>
<label><input type=checkbox id=terms> I accept the terms</label>
<label><input type=checkbox id=news checked> Newsletter</label>
<input type=checkbox id=locked aria-label=Locked onclick="return false">
<fieldset><legend>Plan</legend>
<label><input type=radio name=plan value=free id=free checked> Free</label>
<label><input type=radio name=plan value=pro id=pro> Pro</label></fieldset>
<label for=country>Country</label>
<select id=country><option value="">Choose</option><option value=fr>France</option><option value=de>Germany</option><option value=x disabled>Closed</option></select>
<div id=dd class=dropdown aria-label="Colour" style="width:200px">
  <button type=button class=trigger onclick="document.getElementById('menu').hidden = false">Pick a colour</button>
  <span class=value></span>
  <ul id=menu hidden>
    <li class=opt onclick="pick(this)">Red</li><li class=opt onclick="pick(this)">Green</li>
  </ul>
</div>
<script>
function pick(li) { document.querySelector("#dd .value").textContent = li.textContent; document.getElementById("menu").hidden = true; }
</script>`

func TestCheckAndSelect(t *testing.T) {
	tab := newTab(t, serve("/choices", choicesPage))
	ctx := tctx(t, 20*time.Second)
	state := func(js string) string {
		v, err := tab.Evaluate(ctx, js)
		require.NoError(t, err)
		return string(v)
	}
	require.NoError(t, tab.Check(ctx, Locator{Label: "I accept the terms"}, true, FormOptions{}))
	require.NoError(t, tab.Check(ctx, Locator{Label: "I accept the terms"}, true, FormOptions{})) // already so
	require.NoError(t, tab.Check(ctx, Locator{Label: "Newsletter"}, false, FormOptions{}))
	require.Equal(t, `[true,false]`, state(`() => [terms.checked, news.checked]`))
	require.ErrorIs(t, tab.Check(ctx, Locator{Label: "Locked"}, true, FormOptions{}), errcode.NotCommitted)

	require.NoError(t, tab.Check(ctx, Locator{Role: "radio", Name: "Pro"}, true, FormOptions{}))
	require.Equal(t, `[false,true]`, state(`() => [free.checked, pro.checked]`))
	require.ErrorIs(t, tab.Check(ctx, Locator{Label: "Pro"}, false, FormOptions{}), errcode.BadTarget)
	require.ErrorIs(t, tab.Check(ctx, Locator{Label: "Country"}, true, FormOptions{}), errcode.BadTarget)

	shown, err := tab.Select(ctx, Locator{Label: "Country"}, "Germany", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Germany", shown)
	shown, err = tab.Select(ctx, Locator{Label: "Country"}, "fr", FormOptions{}) // by value
	require.NoError(t, err)
	require.Equal(t, "France", shown)
	require.Equal(t, `"fr"`, state(`() => document.getElementById("country").value`))
	// A missing option, a disabled one or a missing part may yet come: each
	// is waited for until the deadline.
	_, err = tab.Select(tctx(t, 300*time.Millisecond), Locator{Label: "Country"}, "Spain", FormOptions{})
	require.ErrorIs(t, err, errcode.NoOption)
	_, err = tab.Select(tctx(t, 300*time.Millisecond), Locator{Label: "Country"}, "Closed", FormOptions{})
	require.ErrorIs(t, err, errcode.Disabled)
	_, err = tab.Select(ctx, Locator{Label: "I accept the terms"}, "x", FormOptions{})
	require.ErrorIs(t, err, errcode.NotSelect)

	parts := map[string]string{"trigger": ".trigger", "option": ".opt", "value": ".value"}
	shown, err = tab.Select(ctx, Locator{Selector: "#dd"}, "Green", FormOptions{Parts: parts})
	require.NoError(t, err)
	require.Equal(t, "Green", shown)
	_, err = tab.Select(tctx(t, 300*time.Millisecond), Locator{Selector: "#dd"}, "Red", FormOptions{Parts: map[string]string{"trigger": ".nope", "option": ".opt"}})
	require.ErrorIs(t, err, errcode.MissingPart)
	_, err = tab.Select(ctx, Locator{Selector: "#dd"}, "Red", FormOptions{Parts: map[string]string{"option": "]]bad"}})
	require.ErrorIs(t, err, errcode.BadParts)

	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Pick a colour"}, FormOptions{}))
	require.Equal(t, `false`, state(`() => document.getElementById("menu").hidden`))
}

func TestDryRunAndActionLog(t *testing.T) {
	ctx := tctx(t, 20*time.Second)
	var mu sync.Mutex
	var actions []Action
	logged := TabOptions{Log: func(a Action) {
		if a.Method != "evaluate" && a.Method != "goto" {
			mu.Lock()
			actions = append(actions, a)
			mu.Unlock()
		}
	}}
	tab := newTabWith(t, serve("/dryrun", `<label for=pw>Password</label><input id=pw maxlength=8>`+choicesPage), logged)
	opts := FormOptions{}
	const secret = "hunter2-very-secret"

	dry := opts
	dry.DryRun = true
	_, err := tab.Fill(ctx, Locator{Label: "Password"}, secret, dry)
	require.NoError(t, err)
	_, err = tab.Select(ctx, Locator{Selector: "#dd"}, "Green", FormOptions{DryRun: true,
		Parts: map[string]string{"trigger": ".trigger", "option": ".opt", "value": ".value"}})
	require.NoError(t, err)
	require.NoError(t, tab.Check(ctx, Locator{Label: "I accept the terms"}, true, dry))
	v, err := tab.Evaluate(ctx, `() => [pw.value, document.getElementById("menu").hidden, terms.checked]`)
	require.NoError(t, err)
	require.JSONEq(t, `["", true, false]`, string(v), "a dry run changes nothing")

	_, err = tab.Fill(ctx, Locator{Label: "Password"}, secret, opts) // too long: not committed
	require.ErrorIs(t, err, errcode.NotCommitted)
	_, err = tab.Fill(ctx, Locator{Label: "Password"}, "short", opts)
	require.NoError(t, err)
	sites := logged
	sites.Sites = []string{"example.com", "*.example.org"}
	elsewhere := attachWith(t, tab, sites)
	_, err = elsewhere.Fill(ctx, Locator{Label: "Password"}, secret, opts)
	require.ErrorIs(t, err, errcode.SiteNotAllowed)
	v, err = tab.Evaluate(ctx, `() => pw.value`)
	require.NoError(t, err)
	require.JSONEq(t, `"short"`, string(v), "a refused site is not touched")
	sites.Sites = []string{"127.0.0.1"}
	_, err = attachWith(t, tab, sites).Fill(tctx(t, 300*time.Millisecond), Locator{Label: "Nope"}, secret, opts)
	require.ErrorIs(t, err, errcode.NotFound)

	mu.Lock()
	defer mu.Unlock()
	var outcomes []string
	for _, a := range actions {
		require.NotContains(t, fmt.Sprintf("%+v %#v", a, a), "hunter2")
		require.NotContains(t, fmt.Sprintf("%+v", a), "short")
		require.Equal(t, "127.0.0.1", a.Site)
		outcomes = append(outcomes, a.Method+":"+a.Outcome)
	}
	require.Equal(t, []string{"fill:dry-run", "select:dry-run", "check:dry-run", "fill:not_committed", "fill:ok", "fill:refused", "fill:not_found"}, outcomes)
	require.Equal(t, `label "Password"`, actions[0].Target)
}

func TestFocusHookRunsBeforeTyping(t *testing.T) {
	tab := newTab(t, serve("/focus-hook", `<label for=a>A</label><input id=a>`))
	ctx := tctx(t, 20*time.Second)
	var order []string
	opts := FormOptions{Focus: func(ctx context.Context) error {
		v, err := tab.Evaluate(ctx, `() => [document.activeElement.id, a.value]`)
		order = append(order, string(v))
		return err
	}}
	_, err := tab.Fill(ctx, Locator{Label: "A"}, "typed", opts)
	require.NoError(t, err)
	require.Equal(t, []string{`["a",""]`}, order, "focus hook runs after prepareText, before typing")
	opts.Focus = func(context.Context) error { return fmt.Errorf("window is minimised") }
	_, err = tab.Fill(ctx, Locator{Label: "A"}, "again", opts)
	require.ErrorContains(t, err, "window is minimised")
}
