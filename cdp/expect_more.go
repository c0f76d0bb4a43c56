package cdp

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tranquil/automation/errcode"
)

// The expectations added to text, value, visibility and count: an
// element's attributes and states, the page's address and title, and
// each of them turned round (Expectation.Not).

// OfPage reports whether k is expected of the page ([Tab.ExpectPage])
// rather than of an element.
func (k ExpectKind) OfPage() bool { return k == ExpectURL || k == ExpectTitle }

// described reports whether describe has its own words for k (the kinds
// whose messages scripts already match on); the others are phrased.
func (k ExpectKind) described() bool {
	switch k {
	case ExpectText, ExpectContainsText, ExpectValue, ExpectVisible, ExpectHidden, ExpectChecked, ExpectUnchecked, ExpectCount:
		return true
	}
	return false
}

// phrase says what e expects of target, as "target to …" or, with Not,
// "target not to …"; text is the expected text or pattern, worded.
func (e Expectation) phrase(target, text string) string {
	var want string
	switch e.Kind {
	case ExpectText:
		want = "have text " + text
	case ExpectContainsText:
		want = "contain text " + text
	case ExpectValue:
		want = "have value " + text
	case ExpectVisible, ExpectHidden, ExpectChecked, ExpectEnabled, ExpectDisabled, ExpectFocused, ExpectEditable:
		want = "be " + string(e.Kind)
	case ExpectUnchecked:
		want = "be unchecked"
	case ExpectCount:
		want = fmt.Sprintf("match %d elements", e.Count)
		if e.Count == 1 {
			want = "match 1 element"
		}
	case ExpectAttribute:
		want = "have attribute " + strconv.Quote(e.Name)
		if !e.AnyValue {
			want += " " + text
		}
	case ExpectClass:
		want = "have class " + text
	case ExpectURL:
		want = "have URL " + text
	case ExpectTitle:
		want = "have title " + text
	default:
		return string(e.Kind)
	}
	if e.Not {
		return target + " not to " + want
	}
	return target + " to " + want
}

// stateCondition is one check of the kinds of this file that look at an
// element; read reads what (with arg) of it, or says what was seen
// instead when it is not there.
func (fm *forms) stateCondition(loc Locator, e Expectation, read func(ctx context.Context, what, arg string, out any) (string, error)) (func(ctx context.Context) (bool, string, error), bool) {
	switch e.Kind {
	case ExpectAttribute, ExpectClass:
		name := e.Name
		if e.Kind == ExpectClass {
			name = "class"
		}
		return func(ctx context.Context) (bool, string, error) {
			var v *string
			if seen, err := read(ctx, "attribute", name, &v); seen != "" || err != nil {
				return false, seen, err
			}
			if v == nil && e.Kind == ExpectAttribute {
				return false, "no attribute " + strconv.Quote(name), nil
			}
			s := ""
			if v != nil {
				s = *v
			}
			held, err := e.textHeld(ctx, s)
			return held, strconv.Quote(shorten(s, 200)), err
		}, true
	case ExpectEnabled, ExpectDisabled, ExpectFocused, ExpectEditable:
		what, yes, no := string(e.Kind), string(e.Kind), "not "+string(e.Kind)
		switch e.Kind {
		case ExpectEnabled, ExpectDisabled:
			what, yes, no = "enabled", "enabled", "disabled"
		}
		return func(ctx context.Context) (bool, string, error) {
			var on bool
			if seen, err := read(ctx, what, "", &on); seen != "" || err != nil {
				return false, seen, err
			}
			seen := no
			if on {
				seen = yes
			}
			return on == (e.Kind != ExpectDisabled), seen, nil
		}, true
	}
	return nil, false
}

// textHeld reports whether s is what e expects: Pattern's match, else
// exactly Text; an attribute expected without either need only be there.
func (e Expectation) textHeld(ctx context.Context, s string) (bool, error) {
	switch {
	case e.Pattern != nil:
		return e.Pattern.Match(ctx, s)
	case e.AnyValue:
		return true, nil
	case e.Kind == ExpectTitle:
		return normalizeSpace(s) == normalizeSpace(e.Text), nil
	}
	return s == e.Text, nil
}

// ExpectPage checks e, of a page kind (ExpectURL, ExpectTitle), against
// the tab's page until it holds or ctx ends, as [Tab.Expect] checks an
// element's: no deadline means [DefaultReadWait], and a failure says
// what was last seen. It is a page action, logged as an expect of "page"
// with neither the address nor the title expected.
func (t *Tab) ExpectPage(ctx context.Context, e Expectation) error {
	var read func(ctx context.Context) (string, error)
	switch e.Kind {
	case ExpectURL:
		read = t.URL
	case ExpectTitle:
		read = t.Title
	default:
		return &LocatorError{Code: errcode.Invalid, Target: "the page", Message: fmt.Sprintf("nothing to expect of a page called %q: use url or title", string(e.Kind))}
	}
	return t.act(ctx, "expect", "page", false, func(ctx context.Context) error {
		return expectLoop(ctx, t.poll, e.describe("the page"), e.Not, func(ctx context.Context) (bool, string, error) {
			s, err := read(ctx)
			if err != nil {
				return false, "", err
			}
			if e.Kind == ExpectURL && t.localDocumentGrant(s) != "" {
				// As tab.url tells it: a local address the tab may not
				// reach is no address, neither matched nor quoted.
				return e.Text == "" && e.Pattern == nil, "a local address", nil
			}
			held, err := e.textHeld(ctx, s)
			return held, strconv.Quote(shorten(s, 200)), err
		})
	})
}
