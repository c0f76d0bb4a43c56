package cdp

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// A miss among a few candidates (three at most) names them all, rather
// than counting them: the labels there are, the names of a role, the
// elements a filter turned down. Never what a field holds.
func TestFewCandidatesAreNamedNotCounted(t *testing.T) {
	tab := newTab(t, serve("/miss/few", `<!doctype html><title>few</title>
<label>Email <input id=a value="ada@example.org"></label>
<label for=c>Phone</label><input id=c value="0123">
<button>Save draft</button>
<table><tr><td>Ada</td><td>Paid</td></tr><tr><td>Grace</td><td>Due</td></tr></table>`))
	ctx := tctx(t, 30*time.Second)
	for _, c := range []struct {
		loc  Locator
		want string
	}{
		{Locator{Label: "E-mail address"},
			`label "E-mail address": no field with that label; the fields with labels are: <textbox> label "Email", <button> label "Save draft", <textbox> label "Phone"`},
		{Locator{Role: "button", Name: "Publish"},
			`role "button" name "Publish": no element with that role and name; the only element of that role with a name is: <button> label "Save draft"`},
		{Locator{Selector: "tr", HasText: "Nobody"},
			`selector "tr" with text "Nobody": these elements match the rest of the target but not its filters: <tr> text "AdaPaid", <tr> text "GraceDue"`},
		{Locator{Selector: "tr", Has: &Locator{Text: "Grace"}, HasText: "Paid"},
			`these elements match the rest of the target but not its filters`},
	} {
		_, err := tab.Resolve(ctx, c.loc)
		var le *LocatorError
		require.True(t, errors.As(err, &le) && le.Code == errcode.NotFound, "%s: %v", c.loc, err)
		require.Contains(t, err.Error(), c.want)
		require.NotContains(t, err.Error(), "ada@example.org")
		require.NotContains(t, err.Error(), "0123")
	}
}
