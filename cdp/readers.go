package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Readers report what the page shows or holds without acting on it. They
// run in the isolated world through the page-action path like the form
// actions: refused on a document outside the tab's sites, checked again
// for the realm they run in, and logged with the target only, never what
// they read. Text, Value, Attribute and Checked wait for their target
// to be there (hidden and disabled elements are read as they are) until
// ctx ends, or, when ctx has no deadline, as long as an action waits
// ([DefaultFormWait]); several matches fail errcode.Ambiguous at once, as
// they do for an action. IsVisible and Count answer at once: they are
// questions about the page now, not waits.

// DefaultReadWait bounds how long an expectation keeps checking when ctx
// has no deadline: long enough for a page still rendering, short enough
// that a wrong expectation fails soon.
const DefaultReadWait = 5 * time.Second

// Text returns the text loc's element shows (its innerText: rendered
// text, with the line breaks a person sees).
func (fm *forms) Text(ctx context.Context, loc Locator) (string, error) {
	var s string
	err := fm.readOne(ctx, "text", loc, "text", "", &s)
	return s, err
}

// Value returns what loc's field holds: an input's or textarea's
// value, a select's chosen label (the first, for a multiple select), the
// text of a contenteditable element. Other elements are errcode.BadTarget.
func (fm *forms) Value(ctx context.Context, loc Locator) (string, error) {
	var s string
	err := fm.readOne(ctx, "value", loc, "value", "", &s)
	return s, err
}

// Attribute returns the named attribute of loc's element, and whether
// the element has it.
func (fm *forms) Attribute(ctx context.Context, loc Locator, name string) (string, bool, error) {
	var s *string
	err := fm.readOne(ctx, "attribute", loc, "attribute", name, &s)
	if err != nil || s == nil {
		return "", false, err
	}
	return *s, true, nil
}

// Checked reports whether loc's checkbox, switch or radio button is
// checked; any other element is errcode.BadTarget. A custom element whose
// role and state come from ElementInternals (out of the isolated world's
// sight) is read from the accessibility tree.
func (fm *forms) Checked(ctx context.Context, loc Locator) (bool, error) {
	var b bool
	err := fm.readOne(ctx, "checked", loc, "checked", "", &b)
	if errors.Is(err, errcode.BadTarget) {
		if _, st, ok := fm.customWidget(ctx, loc, axState.checkable); ok {
			return st.Checked == "true", nil
		}
	}
	return b, err
}

// IsVisible reports whether an element loc names is visible: false
// when none matches or every match is hidden, true when one or more are
// shown (disabled ones too).
func (fm *forms) IsVisible(ctx context.Context, loc Locator) (bool, error) {
	var vis bool
	err := fm.reader(ctx, "visible", loc, func(ctx context.Context) (err error) {
		vis, err = fm.visible(ctx, loc)
		return err
	})
	return vis, err
}

// Count returns how many elements loc matches, hidden and disabled ones
// included, over every frame Resolve searches: the matches Resolve picks
// from, found the same way, so a count of one is a target Resolve takes
// and [Locator.Nth] below the count picks a match. A target with its own
// Nth counts 1 when the Nth falls among its matches, else 0.
func (fm *forms) Count(ctx context.Context, loc Locator) (int, error) {
	if err := loc.validate(); err != nil {
		return 0, err
	}
	var total int
	err := fm.reader(ctx, "count", loc, func(ctx context.Context) (err error) {
		total, err = fm.count(ctx, loc)
		return err
	})
	return total, err
}

// count is Count without the page action around it.
func (fm *forms) count(ctx context.Context, loc Locator) (int, error) {
	frames, _ := fm.p.searchFrames(loc.Frame)
	if loc.Ref != "" {
		frames = []string{fm.p.frameOfRef(loc.Ref)}
	}
	frames, loc, err := fm.pinScopes(ctx, frames, loc)
	if errors.Is(err, errcode.NotFound) {
		return 0, nil // no scope, so no match
	} else if err != nil {
		return 0, err
	}
	total := 0
	for i, fr := range frames {
		n, err := fm.countIn(ctx, fr, loc)
		if err != nil {
			if i == 0 && fr == "" {
				return 0, err
			}
			continue // a frame that went or refused meanwhile holds none
		}
		total += n
	}
	return nthCount(loc.Nth, total), nil
}

// nthCount is how many of total matches a target's own nth names: one
// when it falls among them, none past them, as Playwright's
// locator.nth(i).count() answers; without an nth, all of them.
func nthCount(nth *int, total int) int {
	if nth == nil {
		return total
	}
	k := *nth
	if k < 0 {
		k += total
	}
	if k >= 0 && k < total {
		return 1
	}
	return 0
}

// reader runs one reader as a page action.
func (fm *forms) reader(ctx context.Context, method string, loc Locator, do func(ctx context.Context) error) error {
	return fm.p.act(ctx, method, loc.String(), false, func(ctx context.Context) error {
		if err := fm.p.checkSomeDocument(ctx); err != nil {
			return err
		}
		return do(ctx)
	})
}

// readOne reads one thing (what, with arg) from the element loc names
// into out, waiting for the element as the readers do.
func (fm *forms) readOne(ctx context.Context, method string, loc Locator, what, arg string, out any) error {
	if err := loc.validate(); err != nil {
		return err
	}
	return fm.reader(ctx, method, loc, func(ctx context.Context) error {
		byRef := loc.Ref != ""
		return fm.untilWith(ctx, DefaultFormWait, func(err error) bool { return readerWaits(err, byRef) }, func(ctx context.Context) error {
			return fm.read(ctx, loc, what, arg, out)
		})
	})
}

// readable reports whether a target may still be found by waiting: it is
// not there yet, or several match while a list still renders (one of
// them may go), or the fresh ref of this very read fell to a re-render.
// An expectation keeps checking on each of these.
func readable(err error, byRef bool) bool {
	var te *LocatorError
	if !errors.As(err, &te) {
		return false
	}
	switch te.Code {
	case errcode.NotFound, errcode.Ambiguous:
		return true
	case errcode.StaleRef:
		return !byRef
	}
	return false
}

// readerWaits reports whether a reader waits on after err: as readable
// says, except that several matches fail at once, as for an action (the
// target needs narrowing, not time).
func readerWaits(err error, byRef bool) bool {
	return readable(err, byRef) && !errors.Is(err, errcode.Ambiguous)
}

// read is one try of readOne, without the page action or the wait.
func (fm *forms) read(ctx context.Context, loc Locator, what, arg string, out any) error {
	ref, err := fm.pickRef(ctx, loc)
	if err != nil {
		return err
	}
	var res struct{ Value json.RawMessage }
	if err := fm.formCallIn(ctx, fm.p.frameOfRef(ref), loc.String(), &res, "readOf", ref, what, arg); err != nil {
		return err
	}
	return json.Unmarshal(res.Value, out)
}

// pickRef resolves loc as the form actions do, and when its only
// matches are hidden or disabled, takes one of those: what they hold can
// still be read (and a file input is often hidden behind its label).
func (fm *forms) pickRef(ctx context.Context, loc Locator) (string, error) {
	el, err := fm.Resolve(ctx, loc)
	if err == nil {
		return el.Ref, nil
	}
	if !errors.Is(err, errcode.Hidden) && !errors.Is(err, errcode.Disabled) {
		return "", err
	}
	if el, err = fm.resolve(ctx, loc, true); err != nil {
		return "", err
	}
	return el.Ref, nil
}

// visible is IsVisible without the page action around it.
func (fm *forms) visible(ctx context.Context, loc Locator) (bool, error) {
	_, err := fm.Resolve(ctx, loc)
	switch {
	case err == nil, errors.Is(err, errcode.Ambiguous), errors.Is(err, errcode.Disabled):
		// ambiguous: several usable, so shown; disabled: shown but not usable
		return true, nil
	case errors.Is(err, errcode.Hidden), errors.Is(err, errcode.NotFound):
		return false, nil
	}
	return false, err
}

// WaitVisible waits until an element loc names is visible, as
// [Tab.IsVisible] reports it, or ctx ends (a *WaitTimeoutError): it is
// [Tab.WaitState] with [StateVisible].
func (fm *forms) WaitVisible(ctx context.Context, loc Locator) error {
	return fm.WaitState(ctx, loc, StateVisible)
}
