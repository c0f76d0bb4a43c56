package cdp

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
)

// forms is the form runtime: it finds elements and acts on them. It
// reaches the page only through p, so the tab's sessions, realms and
// frames stay the core's own (see doc.go).
type forms struct {
	p        core
	axGroups atomic.Uint64 // numbers the object groups of accessibility lookups
}

// core is what the form runtime needs of the tab. Frames are named as the
// core names them: "" for the main frame, else a subframe's id.
type core interface {
	// act runs f as one logged page action (action.go).
	act(ctx context.Context, method, target string, dry bool, f func(ctx context.Context) error) error
	// checkSomeDocument refuses an action when no frame's document is one
	// the tab's sites allow.
	checkSomeDocument(ctx context.Context) error
	// callWorld calls fn in frame fr's isolated world, checked against the
	// tab's sites, and returns its value.
	callWorld(ctx context.Context, fr, fn string, args []runtime.CallArgument) (json.RawMessage, error)
	// world is frame fr's isolated world, checked against the tab's sites,
	// for protocol calls the runtime makes there itself.
	world(ctx context.Context, fr string) (realmRef, error)
	// fail maps an error of such a protocol call.
	fail(err error) error
	// searchFrames lists the frames a target is looked for in, and the
	// sites skipped.
	searchFrames(want string) (frames, skipped []string)
	// frameOrigin is frame fr's address without path, for candidates.
	frameOrigin(fr string) string
	// frameOfRef and noteRef map a runtime ref to the frame that made it.
	frameOfRef(ref string) string
	noteRef(fr, ref string)
	// pagePoint turns a point of frame fr into one of the page.
	pagePoint(ctx context.Context, fr string, x, y float64) (float64, float64, error)
	// click sends a trusted click at the page point (x, y) into frame fr;
	// with landed, it then runs landed and reports a navigation the click
	// started and the tab's policy refused in its place.
	click(ctx context.Context, fr string, x, y float64, landed func(ctx context.Context) error) error
	pressIn(ctx context.Context, fr, key string, mods Modifier) error
	insertTextIn(ctx context.Context, fr, text string) error
	// pause waits before a repeated check (pace.go), and ends when the
	// tab's session does.
	pause(ctx context.Context, backoff []time.Duration, i int) error
	// goTask runs f on a goroutine the tab owns and ends (tasks.go).
	goTask(name string, f func(ctx context.Context))
}

//go:embed forms.js
var formsMain string

//go:embed options.js
var formsOptions string

//go:embed segments.js
var formsSegments string

// formsSource is the whole runtime: forms.js with the parts kept in files
// of their own spliced in.
var formsSource = strings.NewReplacer("  // @include options.js\n", formsOptions, "  // @include segments.js\n", formsSegments).Replace(formsMain)

// formsHash identifies this build of the form runtime; a page holding a
// runtime built from other source rebuilds it.
var formsHash = func() string {
	h := sha256.Sum256([]byte(formsSource))
	return hex.EncodeToString(h[:8])
}()

// formsWrapper is the one function every form call goes through. Only the
// runtime's own source is code; the hash, method and arguments arrive as
// values.
var formsWrapper = `function (hash, name, args) {
  if (!globalThis.__tqForms || globalThis.__tqFormsHash !== hash) {
    globalThis.__tqForms = (` + formsSource + `
)(globalThis);
    globalThis.__tqFormsHash = hash;
  }
  return globalThis.__tqForms[name](...args);
}`

// formsShortWrapper calls a runtime the document already holds. Sending
// the whole runtime with every call costs its parse and transfer (tens of
// kilobytes) each time; this costs a few bytes, and answers no_runtime
// when the runtime must be sent after all (a new document, another build).
const formsShortWrapper = `function (hash, name, args) {
  if (!globalThis.__tqForms || globalThis.__tqFormsHash !== hash) return { ok: false, code: "no_runtime" };
  return globalThis.__tqForms[name](...args);
}`

// formsElementsWrapper calls a runtime method that takes elements, not a
// target: name(els, target), with els passed as remote objects (for adopt,
// the elements the accessibility tree found).
var formsElementsWrapper = `function (hash, name, target, ...els) {
  if (!globalThis.__tqForms || globalThis.__tqFormsHash !== hash) {
    globalThis.__tqForms = (` + formsSource + `
)(globalThis);
    globalThis.__tqFormsHash = hash;
  }
  return globalThis.__tqForms[name](els, target);
}`

// formCall runs one runtime method in the main frame's isolated world.
func (fm *forms) formCall(ctx context.Context, target string, out any, method string, args ...any) error {
	return fm.formCallIn(ctx, "", target, out, method, args...)
}

// formCallIn runs one runtime method in frame fr's isolated world.
func (fm *forms) formCallIn(ctx context.Context, fr, target string, out any, method string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	cargs, err := callArgs([]any{formsHash, method, args})
	if err != nil {
		return err
	}
	raw, err := fm.p.callWorld(ctx, fr, formsShortWrapper, cargs)
	if err == nil && string(raw) == `{"ok":false,"code":"no_runtime"}` {
		raw, err = fm.p.callWorld(ctx, fr, formsWrapper, cargs)
	}
	if err != nil {
		return err
	}
	var res struct {
		OK         bool         `json:"ok"`
		Code       errcode.Code `json:"code"`
		Message    string       `json:"message"`
		Candidates []Candidate  `json:"candidates"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("cdp: form runtime %s: %w", method, err)
	}
	if !res.OK {
		return &LocatorError{Code: res.Code, Target: target, Message: res.Message, Candidates: res.Candidates}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("cdp: form runtime %s: %w", method, err)
		}
	}
	return nil
}

// action runs a form action through the page-action path: refused at once
// when the current document is not allowed, and checked again for the
// realm each step runs in.
func (fm *forms) action(ctx context.Context, method string, loc Locator, opts FormOptions, do func(ctx context.Context) error) error {
	return fm.p.act(ctx, method, loc.String(), opts.DryRun, func(ctx context.Context) error {
		if err := fm.p.checkSomeDocument(ctx); err != nil {
			return err
		}
		return do(ctx)
	})
}

// Fill types value into the text field target names, as a person would.
// It waits (see [Tab.ClickElement]) until the field is there, visible,
// enabled, not read-only, still, and not under an overlay; then it
// focuses the field and selects its text; runs the host's Focus hook;
// types value as one trusted Input.insertText; reads it back, where a
// value the page did not keep is a *NotCommittedError; leaves the field
// so the page's validation runs; and returns the field's state.
//
// A custom element the accessibility tree calls a text field (its role
// from ElementInternals) is clicked to focus it, its text selected and
// typed over, and read back from the tree.
//
// Inputs Chromium gives a picker (date, time, datetime-local, month,
// week, color, range) ignore typed text: their value is set the way the
// picker sets it (the element's own setter, then input and change
// events) and read back as the input reads it ("2024-03-05",
// "#ff8800"; a number for range, within its min, max and step). Number
// and range values are strings of numbers and compare as numbers. As no
// pointer is used, what covers such an input (a custom slider drawn over
// a hidden range) does not hold it up.
//
// An ARIA slider that is no input (role=slider on a div) is focused and
// set with the keys of the ARIA slider pattern until aria-valuenow reads
// value, a number within its bounds (see fillSlider).
//
// A segmented date or time field (a group of spinbuttons, one per part,
// as React Aria and MUI X draw them) is one target: a label naming each
// of its segments, or a hidden form input inside it, names the field.
// It is filled from an ISO value ("2024-03-07", "14:05",
// "2024-03-07T14:05"; "2027-03" for a field of a month and a year, a
// card's expiry) segment by segment in the field's own order, and
// read back from the segments in ISO, as [Tab.Value] reads such a field
// (see fillSegments).
func (fm *forms) Fill(ctx context.Context, loc Locator, value string, opts FormOptions) (FieldState, error) {
	var st FieldState
	err := fm.action(ctx, "fill", loc, opts, func(ctx context.Context) error {
		n := need{Act: "fill"}
		if !opts.DryRun {
			n.Value = &value // focused and selected, or set, in the same call
		}
		el, err := fm.waitReady(ctx, loc, n)
		if errors.Is(err, errcode.NotEditable) {
			if s, ok, e := fm.fillSegments(ctx, loc, value, opts); ok {
				st, err = s, e
				return err
			}
			if s, ok, e := fm.fillSlider(ctx, loc, value, opts); ok {
				st, err = s, e
				return err
			}
			st, err = fm.fillCustom(ctx, loc, value, opts, err)
			return err
		}
		if err != nil || opts.DryRun {
			return err
		}
		desc := loc.String()
		if err := hostFocus(ctx, opts); err != nil {
			return err
		}
		want := value
		switch {
		case el.Mode == "set":
			want = el.Want
		case value == "":
			err = fm.p.pressIn(ctx, el.frame, "Delete", 0) // insertText("") leaves the selection
		default:
			err = fm.p.insertTextIn(ctx, el.frame, value)
		}
		if err != nil {
			return err
		}
		var got struct {
			FieldState
			Committed bool `json:"committed"`
		}
		if err := fm.formCallIn(ctx, el.frame, desc, &got, "finish", el.Ref, want); err != nil {
			return err
		}
		if !got.Committed {
			return &NotCommittedError{Target: desc, Kept: got.Value}
		}
		st = got.FieldState
		return nil
	})
	return st, err
}

// Check sets a checkbox or radio to checked (or a checkbox to unchecked)
// with a trusted click, then reads the state back; a state the page did not
// keep is errcode.NotCommitted. A box already in the wanted state is left alone
// at once; otherwise it waits as [Tab.ClickElement] does. A box that is
// not an <input> (ARIA, ElementInternals) is read from the accessibility
// tree, for up to a second while the widget re-renders.
func (fm *forms) Check(ctx context.Context, loc Locator, checked bool, opts FormOptions) error {
	return fm.action(ctx, "check", loc, opts, func(ctx context.Context) error {
		desc := loc.String()
		el, err := fm.clickReady(ctx, loc, need{Act: "check", Checked: &checked, Dry: opts.DryRun}, func(el *ready) (bool, error) {
			if el.Kind == "radio" && !checked {
				return false, &LocatorError{Code: errcode.BadTarget, Target: desc, Message: "a radio button cannot be unchecked; check another one"}
			}
			return el.Checked != checked, nil
		})
		if errors.Is(err, errcode.BadTarget) {
			return fm.checkCustom(ctx, loc, checked, opts, err)
		}
		if err != nil || el == nil || opts.DryRun {
			return err
		}
		return fm.checkedBack(ctx, el.frame, desc, el.Ref, el.Element.Element.Tag == "input", checked)
	})
}

// clickReady waits until loc is ready for n and clicks it, unless
// click (given the ready element) says no click is needed, or n is a dry
// run; it returns the element clicked (nil when none was). The runtime
// checks where the click lands: a click the page moved something into
// is held back before the page sees it and the whole wait starts again.
func (fm *forms) clickReady(ctx context.Context, loc Locator, n need, click func(*ready) (bool, error)) (*ready, error) {
	desc := loc.String()
	n.Guard = !n.Dry
	var el *ready
	err := fm.until(ctx, loc.Ref != "", func(ctx context.Context) (err error) {
		if el, err = fm.waitReady(ctx, loc, n); err != nil {
			return err
		}
		if click != nil {
			do, err := click(el)
			if err != nil || !do {
				el = nil
				return err
			}
		}
		if n.Dry {
			return nil
		}
		return fm.p.click(ctx, el.frame, el.X, el.Y, func(ctx context.Context) error {
			return fm.formCallIn(ctx, el.frame, desc, nil, "clickLanded")
		})
	})
	if err != nil {
		return nil, err
	}
	return el, nil
}

// Select chooses option, waiting for the target as [Tab.ClickElement]
// does, and returns the choice the page shows afterwards; one that does
// not match option is errcode.NotCommitted.
//
// In a native <select> the option is matched by its label, else its
// value, and chosen as a person's pick would (input and change events);
// the select then holds that option only (see [Tab.SelectAll] for
// several). An option that is not there yet is waited for.
//
// An input with a datalist is typed into: option, or the value of the
// suggestion whose label it is.
//
// An ARIA combobox or listbox (react-select, Tom Select, Choices.js,
// Select2, MUI, Headless UI and the like) is driven with trusted input: a
// click opens it (a listbox too when it says it is collapsed); the option
// whose text matches is clicked once it shows, and when none does and the
// widget focused a filter field, option is typed there first, key by
// key. When none does and the options sit in a list that scrolls (a
// virtualized list renders only those in view), the list is scrolled
// from its top a view at a time until the option shows; one not there by
// the list's end is errcode.NoOption at once. An option its list's
// scroller clips is scrolled into the list's view, and its click is
// checked where it lands as [Tab.ClickElement]'s is. A button whose popup
// holds options (a country picker) counts as a combobox, and a label
// naming both a combobox and its open list names the combobox. A native
// select a library hid behind such a widget resolves to the widget; a
// combobox input that takes no pointer itself (transparent, of no size,
// pointer-events none: react-select without search, PrimeReact's
// Dropdown) is clicked on what the pointer meets there, the widget's
// display (see passFace in forms.js). The
// choice is read back from what the widget shows: a listbox's selected
// options, a closed combobox's value, the options its popup marks
// selected (a web component's own options), or the text displayed in it
// or beside its filter input.
//
// A button that opens a dialog, popover, sheet or menu of choices built
// only once open (Ionic's select in each of its forms, a menu button) is
// clicked, the choice of that name clicked once it shows (a radio,
// option or menu item), the dialog confirmed when it asks (OK, Done), and
// the choice read back from the name the button then shows.
//
// With opts.Parts the dropdown is custom markup: a trusted click on the
// trigger, then on the option whose text matches, and the value part (or
// else what the target shows) is read back.
func (fm *forms) Select(ctx context.Context, loc Locator, option string, opts FormOptions) (string, error) {
	var shown string
	err := fm.action(ctx, "select", loc, opts, func(ctx context.Context) (err error) {
		shown, err = fm.choose(ctx, loc, []string{option}, false, opts)
		if errors.Is(err, errcode.NotSelect) && opts.Parts == nil && !opts.DryRun {
			// A button that opens a dialog or menu of choices.
			if s, e := fm.choosePopup(ctx, loc, option); !errors.Is(e, errcode.NotSelect) {
				shown, err = s, e
			}
		}
		if !errors.Is(err, errcode.Ambiguous) || loc.Label == "" {
			return err
		}
		// The ARIA pattern labels an open list by its field's label: the
		// combobox is the one a person operates. Ambiguous options are
		// not retried, only an ambiguous target.
		if _, e := fm.Resolve(ctx, loc); !errors.Is(e, errcode.Ambiguous) {
			return err
		}
		combo := Locator{Role: "combobox", Name: loc.Label, Exact: loc.Exact, Frame: loc.Frame}
		if s, e := fm.choose(ctx, combo, []string{option}, false, opts); !errors.Is(e, errcode.NotFound) && !errors.Is(e, errcode.Ambiguous) {
			shown, err = s, e
		}
		return err
	})
	return shown, err
}

// SelectAll selects exactly options (each by label, else value) in a
// native <select multiple>, unselecting the rest, and returns the labels
// of the options selected afterwards; a different set is errcode.NotCommitted.
// It waits as [Tab.Select] does.
func (fm *forms) SelectAll(ctx context.Context, loc Locator, options []string, opts FormOptions) ([]string, error) {
	var shown []string
	err := fm.action(ctx, "select", loc, opts, func(ctx context.Context) error {
		n := need{Act: "select", Options: options, Multiple: true, Dry: opts.DryRun}
		if options == nil {
			n.Options = []string{}
		}
		el, err := fm.waitReady(ctx, loc, n)
		if err != nil {
			return err
		}
		desc := loc.String()
		if el.Mode != "native" {
			return &LocatorError{Code: errcode.NotSelect, Target: desc, Message: "not a native select", Candidates: []Candidate{el.Element.Element}}
		}
		shown = el.Values
		if !opts.DryRun && !el.Committed {
			return &NotCommittedError{Target: desc, Kept: strings.Join(shown, ", ")}
		}
		return nil
	})
	return shown, err
}

func (fm *forms) choose(ctx context.Context, loc Locator, options []string, multiple bool, opts FormOptions) (string, error) {
	desc := loc.String()
	n := need{Act: "select", Options: options, Multiple: multiple, Dry: opts.DryRun, Parts: opts.Parts}
	el, err := fm.waitReady(ctx, loc, n)
	if err != nil {
		return "", err
	}
	if el.Mode == "datalist" {
		if opts.DryRun {
			return "", nil
		}
		st, err := fm.Fill(ctx, Locator{Ref: el.Ref}, el.Want, opts)
		return st.Value, err
	}
	if el.Mode == "native" {
		if opts.DryRun {
			return "", nil
		}
		if !el.Committed {
			return el.Value, &NotCommittedError{Target: desc, Kept: el.Value}
		}
		return el.Value, nil
	}
	if opts.DryRun {
		return "", nil
	}
	option := options[0]
	if el.Mode == "parts" || (el.Mode == "combobox" && !el.Expanded) || (el.Mode == "listbox" && el.Closed) {
		if err := fm.p.click(ctx, el.frame, el.X, el.Y, nil); err != nil {
			return "", err
		}
	}
	if err := fm.clickOption(ctx, el, desc, option, opts.Parts); err != nil {
		return "", err
	}
	// Widgets may show the choice a task or a render later.
	shown, ok, err := fm.readBack(ctx, settleWait, func(ctx context.Context) (string, bool, error) {
		var got struct {
			Value string `json:"value"`
		}
		if err := fm.formCallIn(ctx, el.frame, desc, &got, "shown", el.Ref, opts.Parts); err != nil {
			return "", false, err
		}
		return got.Value, strings.Contains(strings.ToLower(got.Value), strings.ToLower(option)), nil
	})
	switch {
	case err != nil:
		return "", err
	case !ok:
		return shown, &NotCommittedError{Target: desc, Kept: shown}
	}
	return shown, nil
}

// typeKeys types text into the focused element of frame fr one key press
// at a time, as a person does: a filter that searches on key events
// (keyup, say) rather than on input sees each key.
func (fm *forms) typeKeys(ctx context.Context, fr, text string) error {
	for _, r := range text {
		if err := fm.p.pressIn(ctx, fr, string(r), 0); err != nil {
			return err
		}
	}
	return nil
}

// reopenAfter is how long Select waits for a combobox's options after
// clicking it open before it checks the widget opened at all.
const reopenAfter = 500 * time.Millisecond

// ClickElement clicks the element loc names with a trusted click at the
// centre of its visible part, scrolling it into view first.
//
// Like every form action it waits for its target until ctx ends (a ctx
// with no deadline waits at most [DefaultFormWait]): until an element
// matches, is visible and enabled, holds the same box in two animation
// frames, and is what a click at its centre lands on, so an overlay or a
// spinner in front of it is waited out. Checks repeat with a short
// backoff and cost one round trip when the element is ready at once. When
// ctx ends first, the error is the last reason the target was not ready
// (errcode.NotFound, errcode.Hidden, errcode.Disabled, errcode.Obscured naming what covers
// it, errcode.NotEditable for a read-only field), with [LocatorError.Waited]
// set. errcode.Ambiguous, an invalid target and a stale ref fail at once, as
// waiting cannot mend them.
//
// Where the click lands is checked too: if the page slips something else
// under the pointer after the check (on the pointer's arrival, say), that
// press is stopped before the page sees it and the wait starts again, so
// a click never lands on an element it was not aimed at.
//
// Typing and native selects send no click: for them an element is still
// when no animation runs on it, and only an overlay from elsewhere on the
// page counts as covering it, not the field's own floating label, mask or
// icon.
func (fm *forms) ClickElement(ctx context.Context, loc Locator, opts FormOptions) error {
	return fm.action(ctx, "click", loc, opts, func(ctx context.Context) error {
		_, err := fm.clickReady(ctx, loc, need{Act: "click", Dry: opts.DryRun}, nil)
		return err
	})
}

// PressElement clicks the element loc names, waiting for it as
// [Tab.ClickElement] does, and presses key on it.
func (fm *forms) PressElement(ctx context.Context, loc Locator, key string, mods Modifier, opts FormOptions) error {
	if _, _, err := keyOf(key); err != nil {
		return err
	}
	return fm.action(ctx, "press", loc, opts, func(ctx context.Context) error {
		el, err := fm.clickReady(ctx, loc, need{Act: "click", Dry: opts.DryRun}, nil)
		if err != nil || opts.DryRun {
			return err
		}
		return fm.p.pressIn(ctx, el.frame, key, mods)
	})
}
