package cdp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// A page whose states change 300 ms after it loads: a button enabled, a
// field made read-only, another focused, a link's address and a class
// changed, the title changed.
const statesPage = `<title>before</title>
<button id=go disabled>Go</button>
<label for=name>Name</label><input id=name>
<label for=email>Email</label><input id=email>
<fieldset disabled><label for=in>Inside</label><input id=in></fieldset>
<div id=ce contenteditable>edit me</div>
<p id=plain>plain</p>
<a id=link href="/old" class="nav">Link</a>
<div id=box class="card  wide">box</div>
<script>
setTimeout(() => {
  document.getElementById("go").disabled = false;
  document.getElementById("name").readOnly = true;
  document.getElementById("email").focus();
  document.getElementById("link").setAttribute("href", "/new");
  document.getElementById("link").removeAttribute("class");
  document.getElementById("box").className = "card";
  document.title = "after  all";
}, 300);
</script>`

// Each new kind passes once the page changes, and .not passes once the
// condition stops holding; both fail with what was last seen.
func TestExpectStatesAndNot(t *testing.T) {
	log := &actionLog{}
	tab := tabWith(t, serve("/states", statesPage), TabOptions{Log: log.add})
	ctx := tctx(t, 30*time.Second)
	sel := func(s string) Locator { return Locator{Selector: s} }
	pat := func(src, flags string) *Pattern {
		p, err := CompilePattern(src, flags)
		require.NoError(t, err)
		return p
	}
	for name, c := range map[string]struct {
		loc Locator
		e   Expectation
	}{
		"enabled later":                {sel("#go"), Expectation{Kind: ExpectEnabled}},
		"not disabled later":           {sel("#go"), Expectation{Kind: ExpectDisabled, Not: true}},
		"disabled by its fieldset":     {sel("#in"), Expectation{Kind: ExpectDisabled}},
		"not editable once read-only":  {sel("#name"), Expectation{Kind: ExpectEditable, Not: true}},
		"editable":                     {sel("#email"), Expectation{Kind: ExpectEditable}},
		"contenteditable is editable":  {sel("#ce"), Expectation{Kind: ExpectEditable}},
		"focused later":                {sel("#email"), Expectation{Kind: ExpectFocused}},
		"not focused":                  {sel("#name"), Expectation{Kind: ExpectFocused, Not: true}},
		"attribute value later":        {sel("#link"), Expectation{Kind: ExpectAttribute, Name: "href", Text: "/new"}},
		"attribute matching":           {sel("#link"), Expectation{Kind: ExpectAttribute, Name: "href", Pattern: pat(`^/n`, "")}},
		"attribute present":            {sel("#link"), Expectation{Kind: ExpectAttribute, Name: "href", AnyValue: true}},
		"attribute gone":               {sel("#link"), Expectation{Kind: ExpectAttribute, Name: "class", AnyValue: true, Not: true}},
		"class, the whole attribute":   {sel("#box"), Expectation{Kind: ExpectClass, Text: "card"}},
		"class matching":               {sel("#box"), Expectation{Kind: ExpectClass, Pattern: pat(`(^|\s)card(\s|$)`, "")}},
		"not text":                     {sel("#plain"), Expectation{Kind: ExpectText, Text: "other", Not: true}},
		"not visible: nothing matches": {sel("#none"), Expectation{Kind: ExpectVisible, Not: true}},
		"not count":                    {sel("p"), Expectation{Kind: ExpectCount, Count: 2, Not: true}},
	} {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := tab.Expect(ectx, c.loc, c.e)
		cancel()
		require.NoError(t, err, name)
	}
	for name, e := range map[string]Expectation{
		"title, white space aside": {Kind: ExpectTitle, Text: "after all"},
		"title matching":           {Kind: ExpectTitle, Pattern: pat(`^AFTER`, "i")},
		"not the old title":        {Kind: ExpectTitle, Text: "before", Not: true},
		"URL":                      {Kind: ExpectURL, Text: site.URL + "/states"},
		"URL matching":             {Kind: ExpectURL, Pattern: pat(`/states$`, "")},
		"not another URL":          {Kind: ExpectURL, Text: site.URL + "/other", Not: true},
	} {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := tab.ExpectPage(ectx, e)
		cancel()
		require.NoError(t, err, name)
	}

	// Failures say what was expected and what was last seen.
	for _, c := range []struct {
		loc      *Locator
		e        Expectation
		expected string
		seen     string
	}{
		{&Locator{Selector: "#go"}, Expectation{Kind: ExpectEnabled, Not: true}, `selector "#go" not to be enabled`, "enabled"},
		{&Locator{Selector: "#in"}, Expectation{Kind: ExpectEnabled}, `selector "#in" to be enabled`, "disabled"},
		{&Locator{Selector: "#plain"}, Expectation{Kind: ExpectText, Text: "plain", Not: true}, `selector "#plain" not to have text "plain"`, `"plain"`},
		{&Locator{Selector: "#link"}, Expectation{Kind: ExpectAttribute, Name: "class", AnyValue: true}, `selector "#link" to have attribute "class"`, `no attribute "class"`},
		{&Locator{Selector: "#box"}, Expectation{Kind: ExpectClass, Text: "wide"}, `selector "#box" to have class "wide"`, `"card"`},
		{&Locator{Selector: "#name"}, Expectation{Kind: ExpectFocused}, `selector "#name" to be focused`, "not focused"},
		{&Locator{Selector: "#none"}, Expectation{Kind: ExpectHidden, Not: true}, `selector "#none" not to be hidden`, "no element matches"},
		// Nothing there has no text, yet is not "not that text" either.
		{&Locator{Selector: "#none"}, Expectation{Kind: ExpectText, Text: "x", Not: true}, `selector "#none" not to have text "x"`, "no element matches"},
		{&Locator{Selector: "#none"}, Expectation{Kind: ExpectEnabled, Not: true}, `selector "#none" not to be enabled`, "no element matches"},
		{nil, Expectation{Kind: ExpectTitle, Text: "before"}, `the page to have title "before"`, `"after all"`},
		{nil, Expectation{Kind: ExpectURL, Pattern: pat(`/states$`, ""), Not: true}, `the page not to have URL matching //states$/`, `"` + site.URL + `/states"`},
	} {
		ectx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		var err error
		if c.loc != nil {
			err = tab.Expect(ectx, *c.loc, c.e)
		} else {
			err = tab.ExpectPage(ectx, c.e)
		}
		cancel()
		var ee *ExpectationError
		require.ErrorAs(t, err, &ee, c.expected)
		assert.Equal(t, c.expected, ee.Expected)
		assert.Equal(t, c.seen, ee.Seen, c.expected)
		assert.ErrorIs(t, err, errcode.ExpectationFailed)
	}

	// A kind of the wrong target fails at once.
	err := tab.Expect(ctx, sel("#plain"), Expectation{Kind: ExpectEditable})
	require.ErrorIs(t, err, errcode.BadTarget)
	require.ErrorIs(t, tab.ExpectPage(ctx, Expectation{Kind: ExpectText, Text: "x"}), errcode.Invalid)

	var pageExpects int
	for _, a := range log.list {
		if a.Method == "expect" && a.Target == "page" {
			pageExpects++
		}
	}
	assert.Equal(t, 8, pageExpects, "each page expectation is logged as one of the page")
}
