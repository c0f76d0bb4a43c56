package cdp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tranquil/automation/errcode"
)

// Waiting for a state and checking a condition again and again, in the
// page, until it holds: the waits of tab.waitFor and the retrying
// expectations of tab.expect. Both poll with the readers' own lookups,
// so a condition that holds at once costs one look.

// WaitState is a state [Tab.WaitState] waits for, as Playwright's
// locator.waitFor names them.
type WaitState string

const (
	// StateVisible: an element the locator names is shown (disabled ones
	// count), as [Tab.IsVisible] reports it.
	StateVisible WaitState = "visible"
	// StateHidden: none matches, or every match is hidden.
	StateHidden WaitState = "hidden"
	// StateAttached: some element matches, shown or hidden.
	StateAttached WaitState = "attached"
	// StateDetached: no element matches.
	StateDetached WaitState = "detached"
)

// WaitState waits until the elements loc names are in state s, or ctx
// ends: then a *WaitTimeoutError says what was last seen. It is a page
// action, logged as a waitFor, and survives navigations: each check looks
// at the document shown then.
func (fm *forms) WaitState(ctx context.Context, loc Locator, s WaitState) error {
	if err := loc.validate(); err != nil {
		return err
	}
	switch s {
	case StateVisible, StateHidden, StateAttached, StateDetached:
	default:
		return &LocatorError{Code: errcode.Invalid, Target: loc.String(), Message: fmt.Sprintf("no state %q: wait for visible, hidden, attached or detached", string(s))}
	}
	what := loc.String()
	return fm.p.act(ctx, "waitFor", what, false, func(ctx context.Context) error {
		start := time.Now()
		var seen string
		err := fm.poll(ctx, func(ctx context.Context) (bool, error) {
			held, now, err := fm.inState(ctx, loc, s, false)
			if err == nil {
				seen = now // a check cut short by ctx saw nothing
			}
			return held, err
		})
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return &WaitTimeoutError{What: fmt.Sprintf("%s to be %s", what, s), Err: ctx.Err(), Waited: waitedSince(ctx, start), Seen: seen}
		}
		return err
	})
}

// inState reports whether loc's elements are in state s, and what they
// are when it does not hold, or with describeHeld when it does too: an
// expectation turned round (Expectation.Not) fails on what it saw then.
// A wait that the state ends asks nothing more of the page.
func (fm *forms) inState(ctx context.Context, loc Locator, s WaitState, describeHeld bool) (bool, string, error) {
	switch s {
	case StateAttached, StateDetached:
		n, err := fm.count(ctx, loc)
		if err != nil {
			return false, "", err
		}
		return (n > 0) == (s == StateAttached), matches(n), nil
	}
	shown, err := fm.shown(ctx, loc)
	if err != nil {
		return false, "", err
	}
	held := (shown > 0) == (s == StateVisible)
	if held && !describeHeld {
		return true, "", nil
	}
	switch shown {
	case 0:
		n, err := fm.count(ctx, loc)
		if err != nil || n == 0 {
			return held, matches(0), err
		}
		return held, matches(n) + ", none visible", nil
	case 1:
		return held, "1 visible element matches", nil
	}
	return held, "more than one visible element matches", nil
}

// shown tells how many elements loc names are shown: 0, 1, or 2 for
// more than one. A disabled element is shown.
func (fm *forms) shown(ctx context.Context, loc Locator) (int, error) {
	_, err := fm.Resolve(ctx, loc)
	switch {
	case err == nil, errors.Is(err, errcode.Disabled):
		return 1, nil
	case errors.Is(err, errcode.Ambiguous):
		return 2, nil
	case errors.Is(err, errcode.Hidden), errors.Is(err, errcode.NotFound):
		return 0, nil
	}
	return 0, err
}

// matches says how many elements match.
func matches(n int) string {
	switch n {
	case 0:
		return "no element matches"
	case 1:
		return "1 element matches"
	}
	return strconv.Itoa(n) + " elements match"
}

// poll checks cond until it holds, fails (its error: waiting cannot mend
// it), or ctx ends (ctx's error). The pauses between checks are short at
// first, then ease off.
func (fm *forms) poll(ctx context.Context, cond func(ctx context.Context) (bool, error)) error {
	for i := 0; ; i++ {
		held, err := cond(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if held {
			return nil
		}
		if err := fm.p.pause(ctx, waitBackoff, i); err != nil {
			return err
		}
	}
}

// ExpectKind names what [Tab.Expect] checks.
type ExpectKind string

const (
	// ExpectText: the element's text (as [Tab.Text] reads it) is
	// Expectation.Text, white space aside (runs of it count as one space,
	// and none at either end), or matches Expectation.Pattern.
	ExpectText ExpectKind = "text"
	// ExpectContainsText: the text contains Expectation.Text, white space
	// aside, or matches Expectation.Pattern.
	ExpectContainsText ExpectKind = "containsText"
	// ExpectValue: the field holds exactly Expectation.Text (as
	// [Tab.Value] reads it), or a value matching Expectation.Pattern.
	ExpectValue ExpectKind = "value"
	// ExpectVisible: an element the locator names is shown.
	ExpectVisible ExpectKind = "visible"
	// ExpectHidden: none is shown, or none matches.
	ExpectHidden ExpectKind = "hidden"
	// ExpectChecked: the checkbox, switch or radio button is checked.
	ExpectChecked ExpectKind = "checked"
	// ExpectUnchecked: it is not checked.
	ExpectUnchecked ExpectKind = "unchecked"
	// ExpectCount: Expectation.Count elements match, hidden ones
	// included, as [Tab.Count] counts them.
	ExpectCount ExpectKind = "count"
	// ExpectAttribute: the element has the attribute Expectation.Name,
	// with the value Expectation.Text or one matching Expectation.Pattern
	// when either is set.
	ExpectAttribute ExpectKind = "attribute"
	// ExpectClass: the element's class attribute is exactly
	// Expectation.Text, or matches Expectation.Pattern.
	ExpectClass ExpectKind = "class"
	// ExpectEnabled: the element is not disabled (by the disabled
	// attribute, a disabled fieldset, or aria-disabled).
	ExpectEnabled ExpectKind = "enabled"
	// ExpectDisabled: it is.
	ExpectDisabled ExpectKind = "disabled"
	// ExpectFocused: the element has the focus in its document.
	ExpectFocused ExpectKind = "focused"
	// ExpectEditable: the field can be typed into: an input, text area,
	// select or editable element that is neither disabled nor read-only.
	ExpectEditable ExpectKind = "editable"
	// ExpectURL: the page's address (as [Tab.URL] reads it) is
	// Expectation.Text, or matches Expectation.Pattern. A page kind: see
	// [Tab.ExpectPage].
	ExpectURL ExpectKind = "url"
	// ExpectTitle: the page's title (as [Tab.Title] reads it) is
	// Expectation.Text, white space aside, or matches
	// Expectation.Pattern. A page kind.
	ExpectTitle ExpectKind = "title"
)

// Expectation is a condition on the elements a locator names.
type Expectation struct {
	Kind ExpectKind
	// Text is the text or value expected, unless Pattern is set.
	Text string
	// Pattern, when set, is what the text or value must match.
	Pattern *Pattern
	// Count is the number of elements ExpectCount expects.
	Count int
	// Name is the attribute ExpectAttribute looks at.
	Name string
	// AnyValue makes ExpectAttribute hold for any value, Text and
	// Pattern aside: the attribute need only be there.
	AnyValue bool
	// Not turns the expectation round: it holds once the condition does
	// not.
	Not bool
}

// describe says what e expects of the elements target names.
func (e Expectation) describe(target string) string {
	text := strconv.Quote(e.Text)
	if e.Pattern != nil {
		text = "matching " + e.Pattern.String()
	}
	if e.Not || !e.Kind.described() {
		return e.phrase(target, text)
	}
	switch e.Kind {
	case ExpectText:
		return fmt.Sprintf("text %s in %s", text, target)
	case ExpectContainsText:
		if e.Pattern == nil {
			text = "containing " + text
		}
		return fmt.Sprintf("text %s in %s", text, target)
	case ExpectValue:
		return fmt.Sprintf("value %s in %s", text, target)
	case ExpectVisible:
		return target + " to be visible"
	case ExpectHidden:
		return target + " to be hidden"
	case ExpectChecked:
		return target + " to be checked"
	case ExpectUnchecked:
		return target + " not to be checked"
	case ExpectCount:
		if e.Count == 1 {
			return target + " to match 1 element"
		}
		return fmt.Sprintf("%s to match %d elements", target, e.Count)
	}
	return string(e.Kind)
}

// ExpectationError is an expectation that did not hold before its time
// ran out. Its code is expectation_failed.
type ExpectationError struct {
	// Expected says what was expected, target included: `text "Saved"
	// in role "status"`.
	Expected string
	// Seen is what the last check found: a quoted text, or words such
	// as "no element matches".
	Seen string
	// Waited is how long the expectation was checked.
	Waited time.Duration
}

func (e *ExpectationError) Error() string {
	sep := ", last seen: "
	if strings.HasPrefix(e.Seen, `"`) {
		sep = ", last seen "
	}
	return fmt.Sprintf("expected %s%s%s (waited %s)", e.Expected, sep, e.Seen, waited(e.Waited))
}

// ErrorCode is expectation_failed.
func (e *ExpectationError) ErrorCode() errcode.Code { return errcode.ExpectationFailed }

// Is matches errcode.ExpectationFailed.
func (e *ExpectationError) Is(target error) bool { return target == error(errcode.ExpectationFailed) }

// waited words a wait for people: "300 ms", "5 s", "2.5 s".
func waited(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// Expect checks e against the elements loc names until it holds or ctx
// ends, then fails with an *ExpectationError saying what was last seen
// (a *WaitTimeoutError when ctx was cancelled rather than timed out).
// Waiting for the target is part of it: not found and several matches
// are what was seen. A target of the wrong kind (a value of a link), a
// page outside the tab's sites or a stale ref fail at once. It is a page
// action, logged as an expect with the target only, never the text.
func (fm *forms) Expect(ctx context.Context, loc Locator, e Expectation) error {
	if err := loc.validate(); err != nil {
		return err
	}
	what := loc.String()
	cond, err := fm.condition(loc, e)
	if err != nil {
		return err
	}
	return fm.p.act(ctx, "expect", what, false, func(ctx context.Context) error {
		return expectLoop(ctx, fm.poll, e.describe(what), e.Not, cond)
	})
}

// expectLoop checks cond with poll until it holds (or, with not, until
// it does not), within DefaultReadWait when ctx has no deadline, and
// words the failure: expected, and what was last seen.
func expectLoop(ctx context.Context, poll func(context.Context, func(context.Context) (bool, error)) error, expected string, not bool, cond func(ctx context.Context) (bool, string, error)) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultReadWait)
		defer cancel()
	}
	start := time.Now()
	var seen string
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		held, now, err := cond(ctx)
		if err == nil {
			seen = now // a check cut short by ctx saw nothing
		}
		return held != not, err
	})
	if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	if errors.Is(ctx.Err(), context.Canceled) || seen == "" {
		return &WaitTimeoutError{What: expected, Err: ctx.Err()}
	}
	return &ExpectationError{Expected: expected, Seen: seen, Waited: waitedSince(ctx, start)}
}

// condition is one check of e: whether it holds, and what was seen. A
// target that is not there (yet) holds no condition on an element, nor
// its opposite, as in Playwright: only the states (visible, hidden,
// count) say something of nothing.
func (fm *forms) condition(loc Locator, e Expectation) (func(ctx context.Context) (bool, string, error), error) {
	var missing bool
	cond, err := fm.check(loc, e, &missing)
	if err != nil || !e.Not {
		return cond, err
	}
	return func(ctx context.Context) (bool, string, error) {
		missing = false
		held, seen, err := cond(ctx)
		return held || missing, seen, err
	}, nil
}

// check is condition's check; it sets *missing when the target was not
// there to read.
func (fm *forms) check(loc Locator, e Expectation, missing *bool) (func(ctx context.Context) (bool, string, error), error) {
	byRef := loc.Ref != ""
	// read reads what into out; a target not there (yet) is what was seen.
	read := func(ctx context.Context, what, arg string, out any) (string, error) {
		err := fm.read(ctx, loc, what, arg, out)
		var le *LocatorError
		if err != nil && readable(err, byRef) && errors.As(err, &le) {
			*missing = true
			if le.Code == errcode.Ambiguous {
				return "more than one element matches", nil
			}
			return matches(0), nil
		}
		return "", err
	}
	switch e.Kind {
	case ExpectText, ExpectContainsText, ExpectValue:
		what := "text"
		if e.Kind == ExpectValue {
			what = "value"
		}
		want := e.Text
		if e.Kind != ExpectValue {
			want = normalizeSpace(want)
		}
		return func(ctx context.Context) (bool, string, error) {
			var s string
			if seen, err := read(ctx, what, "", &s); seen != "" || err != nil {
				return false, seen, err
			}
			var held bool
			switch {
			case e.Pattern != nil:
				var err error
				if held, err = e.Pattern.Match(ctx, s); err != nil {
					return false, "", err
				}
			case e.Kind == ExpectValue:
				held = s == want
			case e.Kind == ExpectText:
				held = normalizeSpace(s) == want
			default:
				held = strings.Contains(normalizeSpace(s), want)
			}
			return held, strconv.Quote(shorten(s, 200)), nil
		}, nil
	case ExpectChecked, ExpectUnchecked:
		return func(ctx context.Context) (bool, string, error) {
			var on bool
			if seen, err := read(ctx, "checked", "", &on); seen != "" || err != nil {
				return false, seen, err
			}
			if on {
				return e.Kind == ExpectChecked, "checked", nil
			}
			return e.Kind == ExpectUnchecked, "not checked", nil
		}, nil
	case ExpectVisible, ExpectHidden:
		s := StateVisible
		if e.Kind == ExpectHidden {
			s = StateHidden
		}
		return func(ctx context.Context) (bool, string, error) { return fm.inState(ctx, loc, s, e.Not) }, nil
	case ExpectCount:
		if e.Count < 0 {
			return nil, &LocatorError{Code: errcode.Invalid, Target: loc.String(), Message: "a count cannot be negative"}
		}
		return func(ctx context.Context) (bool, string, error) {
			n, err := fm.count(ctx, loc)
			return n == e.Count, matches(n), err
		}, nil
	}
	if cond, ok := fm.stateCondition(loc, e, read); ok {
		return cond, nil
	}
	return nil, &LocatorError{Code: errcode.Invalid, Target: loc.String(), Message: fmt.Sprintf("nothing to expect called %q", string(e.Kind))}
}

// normalizeSpace makes each run of white space one space and trims both
// ends, as a person reads text (and accname matching does): the words of
// strings.Fields joined by spaces. It runs over every accessible name of
// a page on each lookup and over the page's text on each try of an
// expectation, so it copies nothing when s is already so, and else
// writes each byte once instead of making a string of each word.
func normalizeSpace(s string) string {
	if spaceNormal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	word := -1 // where the word being read starts, -1 between words
	for i := 0; i < len(s); {
		size, space := spaceAt(s, i)
		switch {
		case space && word >= 0:
			b.WriteString(s[word:i])
			word = -1
		case !space && word < 0:
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			word = i
		}
		i += size
	}
	if word >= 0 {
		b.WriteString(s[word:])
	}
	return b.String()
}

// spaceNormal reports whether normalizeSpace(s) is s: no white space at
// either end, and only single ' ' between words.
func spaceNormal(s string) bool {
	after := true // after white space, or at the start
	for i := 0; i < len(s); {
		size, space := spaceAt(s, i)
		if space && (after || s[i] != ' ') {
			return false
		}
		after = space
		i += size
	}
	return !after || s == ""
}

// spaceAt is the size of the character at s[i], and whether it is white
// space as strings.Fields reads it (an invalid byte is a character of one
// byte, and no space).
func spaceAt(s string, i int) (size int, space bool) {
	if c := s[i]; c < utf8.RuneSelf {
		return 1, c == ' ' || '\t' <= c && c <= '\r'
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return size, unicode.IsSpace(r)
}
