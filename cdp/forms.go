package cdp

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed forms.js
var formsSource string

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

// Form errors. A *TargetError matches the sentinel for its code.
var (
	ErrNotFound       = errors.New("cdp: no element matches the target")
	ErrAmbiguous      = errors.New("cdp: more than one element matches the target")
	ErrHidden         = errors.New("cdp: the target is hidden")
	ErrDisabled       = errors.New("cdp: the target is disabled")
	ErrStaleRef       = errors.New("cdp: stale element reference; resolve the target again")
	ErrBadTarget      = errors.New("cdp: invalid target")
	ErrNotEditable    = errors.New("cdp: the target does not take text")
	ErrObscured       = errors.New("cdp: another element covers the target")
	ErrNotStable      = errors.New("cdp: the target keeps moving")
	ErrNoOption       = errors.New("cdp: no such option")
	ErrMissingPart    = errors.New("cdp: a custom part is missing")
	ErrNotCommitted   = errors.New("cdp: the page did not keep the value")
	ErrSiteNotAllowed = errors.New("cdp: the page's site is not allowed")
)

var codeErrors = map[string]error{
	"not_found": ErrNotFound, "ambiguous": ErrAmbiguous, "hidden": ErrHidden, "disabled": ErrDisabled,
	"stale_ref": ErrStaleRef, "bad_target": ErrBadTarget, "not_editable": ErrNotEditable,
	"not_focusable": ErrNotEditable, "obscured": ErrObscured, "no_option": ErrNoOption,
	"not_select": ErrBadTarget, "bad_parts": ErrBadTarget, "missing_part": ErrMissingPart,
	"readonly": ErrNotEditable, "not_stable": ErrNotStable,
}

// Candidate describes an element the runtime considered.
type Candidate struct {
	Tag      string `json:"tag"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
	Type     string `json:"type,omitempty"`
	Label    string `json:"label,omitempty"`
	Text     string `json:"text,omitempty"`
	Hidden   bool   `json:"hidden,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	// Frame is the address (scheme and host) of the frame the element is
	// in, when that is not the main frame.
	Frame string `json:"frame,omitempty"`
}

func (c Candidate) String() string {
	s := "<" + c.Tag
	for _, kv := range [][2]string{{"id", c.ID}, {"name", c.Name}, {"type", c.Type}} {
		if kv[1] != "" {
			s += fmt.Sprintf(" %s=%q", kv[0], kv[1])
		}
	}
	s += ">"
	if c.Label != "" {
		s += fmt.Sprintf(" label %q", c.Label)
	} else if c.Text != "" {
		s += fmt.Sprintf(" text %q", c.Text)
	}
	if c.Hidden {
		s += " (hidden)"
	}
	if c.Disabled {
		s += " (disabled)"
	}
	if c.Frame != "" {
		s += " in a frame of " + c.Frame
	}
	return s
}

// LocatorError reports why a target could not be used.
type LocatorError struct {
	Code       string // the runtime's code, e.g. "ambiguous"
	Target     string // the target, described
	Message    string
	Candidates []Candidate // the elements involved, when that helps
	// Waited is how long an action waited for its target before giving
	// up with this reason; 0 when it did not wait.
	Waited time.Duration
}

func (e *LocatorError) Error() string {
	s := fmt.Sprintf("cdp: %s: %s", e.Target, e.Message)
	if len(e.Candidates) > 0 {
		parts := make([]string, len(e.Candidates))
		for i, c := range e.Candidates {
			parts[i] = c.String()
		}
		s += ": " + strings.Join(parts, ", ")
	}
	if e.Waited > 0 {
		s += fmt.Sprintf(" (waited %s)", e.Waited.Round(time.Millisecond))
	}
	return s
}

// Is matches the sentinel for the error's code.
func (e *LocatorError) Is(target error) bool { return codeErrors[e.Code] == target }

// NotCommittedError reports a value the page did not keep (truncated,
// reformatted, rejected). It matches ErrNotCommitted.
type NotCommittedError struct {
	Target string
	// Kept is what the field holds instead.
	Kept string
}

func (e *NotCommittedError) Error() string {
	return fmt.Sprintf("cdp: %s: the page did not keep the value (it holds %d characters)", e.Target, len([]rune(e.Kept)))
}

func (e *NotCommittedError) Is(target error) bool { return target == ErrNotCommitted }

// Locator names an element for the form actions. Set exactly one way of
// finding it; Role may be combined with Name, which then means the
// accessible name rather than the name attribute.
//
// Every way looks into open shadow roots. A Selector is matched in the
// document and in each open shadow root on its own, so no combinator
// crosses a shadow boundary ("my-field input" finds nothing inside
// my-field's shadow root; "input" finds inputs everywhere). Labels count
// through slots: text slotted into a component's <label>, a <label>
// slotted into (or pointing with for= at, or wrapped around) a component
// whose shadow root holds one field, and aria-labelledby ids, looked up
// in the element's own root first. Closed shadow roots are out of
// script's reach; {role, name} and {label} targets reach them through
// the accessibility tree.
type Locator struct {
	Label       string `json:"label,omitempty"`       // <label for>, wrapping <label>, aria-label, aria-labelledby
	Placeholder string `json:"placeholder,omitempty"` // placeholder attribute
	Name        string `json:"name,omitempty"`        // name attribute; with Role, the accessible name
	Role        string `json:"role,omitempty"`        // explicit or implicit ARIA role
	Text        string `json:"text,omitempty"`        // the element's text
	Selector    string `json:"selector,omitempty"`    // CSS selector
	TestID      string `json:"testId,omitempty"`      // data-testid attribute
	Ref         string `json:"ref,omitempty"`         // a ref from an earlier Resolve
	// Exact makes a {role, name} or {label} match case-sensitive and whole
	// (after whitespace is normalised); otherwise a case-insensitive
	// substring matches, and a whole match is preferred.
	Exact bool `json:"exact,omitempty"`
	// Frame limits the search to the frames below the main one whose name
	// attribute is Frame or whose address contains it. Empty searches the
	// main frame and every frame in it.
	Frame string `json:"frame,omitempty"`
}

// String describes the target for logs and errors. It never includes a
// value being typed.
func (t Locator) String() string {
	switch {
	case t.Ref != "":
		return fmt.Sprintf("ref %q", t.Ref)
	case t.Role != "" && t.Name != "":
		return fmt.Sprintf("role %q name %q", t.Role, t.Name)
	case t.Role != "":
		return fmt.Sprintf("role %q", t.Role)
	case t.Label != "":
		return fmt.Sprintf("label %q", t.Label)
	case t.Placeholder != "":
		return fmt.Sprintf("placeholder %q", t.Placeholder)
	case t.Name != "":
		return fmt.Sprintf("name %q", t.Name)
	case t.Text != "":
		return fmt.Sprintf("text %q", t.Text)
	case t.Selector != "":
		return fmt.Sprintf("selector %q", t.Selector)
	case t.TestID != "":
		return fmt.Sprintf("testId %q", t.TestID)
	}
	return "empty target"
}

func (t Locator) validate() error {
	n := 0
	for _, s := range []string{t.Label, t.Placeholder, t.Text, t.Selector, t.TestID, t.Ref} {
		if s != "" {
			n++
		}
	}
	if t.Role != "" || t.Name != "" {
		n++
	}
	if n != 1 {
		return &LocatorError{Code: "bad_target", Target: t.String(), Message: "set exactly one way to find the element"}
	}
	return nil
}

// Element is a resolved target.
type Element struct {
	// Ref names the element in later calls (Locator{Ref: …}) until the page
	// navigates or removes it.
	Ref string `json:"ref"`
	// Kind is "text", "checkbox", "radio", "select" or "other".
	Kind string `json:"kind"`
	// Element describes it.
	Element Candidate `json:"element"`
	// Skipped lists hidden or disabled elements that also matched and were
	// passed over.
	Skipped []Candidate `json:"skipped"`

	frame string // the frame it is in; "" for the main frame
}

// FieldState is a field after commit.
type FieldState struct {
	Value             string `json:"value"`
	Invalid           bool   `json:"invalid"`
	ValidationMessage string `json:"validationMessage"`
	ErrorText         string `json:"errorText"`
}

// Action is one entry of the action log. It never holds the value typed or
// chosen.
type Action struct {
	Method  string // "fill", "check", "select", "click", "press", "goto", …; "navigate" for a refused navigation, "navigated" for one the page made
	Target  string // the target, described; for a navigation, origin and path with only the query's length
	Site    string // host of the page
	Outcome string // "ok", "dry-run", "refused", or an error code of [Codes] such as "not_committed"
}

// FormOptions configures a form action. The zero value acts as soon as the
// target is ready (see [Tab.ClickTarget]); how long it waits is ctx's
// deadline. Which sites an action may run on, and where it is logged,
// belong to the tab (see [TabOptions]).
type FormOptions struct {
	// DryRun waits for the target (and custom parts) as the action would,
	// logs the write it would have made, and changes nothing.
	DryRun bool
	// Focus is the host's hook to give the tab keyboard focus before
	// typing. Nil skips it.
	Focus func(context.Context) error
	// Parts are selectors for a custom dropdown, used by Select: "trigger"
	// (opens it; default the target itself), "option" (its options,
	// matched by text) and "value" (shows the chosen value; default what
	// the target shows, as for an ARIA combobox). They are looked up in
	// the isolated world, inside the target first and open shadow roots
	// included, never run.
	Parts map[string]string
}

// formCall runs one runtime method in the main frame's isolated world.
func (t *Tab) formCall(ctx context.Context, target string, out any, method string, args ...any) error {
	return t.formCallIn(ctx, "", target, out, method, args...)
}

// formCallIn runs one runtime method in frame fr's isolated world.
func (t *Tab) formCallIn(ctx context.Context, fr, target string, out any, method string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	cargs, err := callArgs([]any{formsHash, method, args})
	if err != nil {
		return err
	}
	raw, err := t.callIn(ctx, fr, sdkWorld, formsShortWrapper, cargs)
	if err == nil && string(raw) == `{"ok":false,"code":"no_runtime"}` {
		raw, err = t.callIn(ctx, fr, sdkWorld, formsWrapper, cargs)
	}
	if err != nil {
		return err
	}
	var res struct {
		OK         bool        `json:"ok"`
		Code       string      `json:"code"`
		Message    string      `json:"message"`
		Candidates []Candidate `json:"candidates"`
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

// Resolve finds the element target names, in the isolated world. Hidden and
// disabled matches are never picked: they are reported in Skipped, or as
// ErrHidden / ErrDisabled when nothing else matches. More than one usable
// match is ErrAmbiguous, listing the candidates. A native select a
// component library hid behind its own combobox resolves to that
// combobox. Resolve looks once; the actions wait for their target.
//
// The main frame and every frame below it whose document the tab's sites
// allow are searched, same-site and cross-site (out-of-process) frames
// alike; matches in two frames are ErrAmbiguous, and [Locator.Frame]
// narrows the search to some frames.
func (t *Tab) Resolve(ctx context.Context, target Locator) (*Element, error) {
	if err := target.validate(); err != nil {
		return nil, err
	}
	if target.Ref != "" {
		return t.resolveIn(ctx, t.frameOfRef(target.Ref), target)
	}
	frames, skipped := t.searchFrames(target.Frame)
	switch len(frames) {
	case 0:
		if err := t.checkDocument(ctx); err != nil && target.Frame == "" {
			return nil, err
		}
		return nil, notInFrames(target, skipped)
	case 1:
		el, err := t.resolveIn(ctx, frames[0], target)
		return el, withSkipped(err, skipped)
	}
	type found struct {
		el  *Element
		err error
	}
	res := make([]found, len(frames))
	var wg sync.WaitGroup
	for i, fr := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			el, err := t.resolveIn(ctx, fr, target)
			res[i] = found{el, err}
		}()
	}
	wg.Wait()
	var els []*Element
	var best *LocatorError
	rank := map[string]int{"not_found": 1, "hidden": 2, "disabled": 2, "ambiguous": 3}
	for i, r := range res {
		var te *LocatorError
		switch {
		case r.err == nil:
			els = append(els, r.el)
		case errors.As(r.err, &te):
			if best == nil || rank[te.Code] > rank[best.Code] {
				best = te
			} else if te.Code == best.Code && te.Code == "not_found" {
				cp := *best
				cp.Candidates = append(slices.Clip(cp.Candidates), te.Candidates...)
				best = &cp
			}
		case i == 0 && frames[0] == "":
			return nil, r.err // the main frame's own failure: the browser or the page
		}
	}
	switch {
	case len(els) == 1:
		return els[0], nil
	case len(els) > 1:
		cands := make([]Candidate, 0, len(els))
		for _, el := range els {
			cands = append(cands, el.Element)
		}
		return nil, &LocatorError{Code: "ambiguous", Target: target.String(), Candidates: cands,
			Message: fmt.Sprintf("%d elements in different frames match; narrow the target (frame: names a frame)", len(els))}
	case best != nil:
		return nil, withSkipped(best, skipped)
	}
	return nil, withSkipped(res[0].err, skipped)
}

// resolveIn is Resolve in one frame.
func (t *Tab) resolveIn(ctx context.Context, fr string, target Locator) (*Element, error) {
	el, err := t.resolveFrame(ctx, fr, target)
	if err != nil {
		return nil, t.inFrame(fr, err)
	}
	el.frame = fr
	if fr != "" {
		el.Element.Frame = addressOf(t.frameURL(fr))
		t.noteRef(fr, el.Ref)
	}
	return el, nil
}

func (t *Tab) resolveFrame(ctx context.Context, fr string, target Locator) (*Element, error) {
	if axTarget(target) {
		// Roles and names as the browser computes them; the runtime's own
		// reading of labels stays as a fallback for what the tree does not
		// name that way (a label that is not the control's accessible name).
		el, err := t.resolveAX(ctx, fr, target)
		if !errors.Is(err, ErrNotFound) || target.Label == "" {
			return el, err
		}
	}
	var el Element
	if err := t.formCallIn(ctx, fr, target.String(), &el, "resolve", target); err != nil {
		return nil, err
	}
	return &el, nil
}

// editTarget returns err with its TargetError replaced by a copy that
// edit changed, when err holds one that keep accepts; errors are shared,
// so they are never changed in place.
func editTarget(err error, keep func(*LocatorError) bool, edit func(*LocatorError)) error {
	var te *LocatorError
	if !errors.As(err, &te) || !keep(te) {
		return err
	}
	cp := *te
	edit(&cp)
	return &cp
}

// named gives a TargetError made without a target the target's
// description.
func named(err error, desc string) error {
	return editTarget(err, func(te *LocatorError) bool { return te.Target == "" },
		func(te *LocatorError) { te.Target = desc })
}

// inFrame marks the candidates of a subframe's TargetError with the
// frame's address.
func (t *Tab) inFrame(fr string, err error) error {
	if fr == "" {
		return err
	}
	return editTarget(err, func(te *LocatorError) bool { return len(te.Candidates) > 0 }, func(te *LocatorError) {
		addr := addressOf(t.frameURL(fr))
		te.Candidates = slices.Clone(te.Candidates)
		for i := range te.Candidates {
			te.Candidates[i].Frame = addr
		}
	})
}

// withSkipped adds to a not_found the frames that were not searched
// because the tab's sites do not allow them.
func withSkipped(err error, skipped []string) error {
	if len(skipped) == 0 {
		return err
	}
	return editTarget(err, func(te *LocatorError) bool { return te.Code == CodeNotFound }, func(te *LocatorError) {
		te.Message += fmt.Sprintf("; frames on sites the script may not act on were not searched: %s", strings.Join(skipped, ", "))
	})
}

// notInFrames is the not_found of a search that had no frame to look in.
func notInFrames(target Locator, skipped []string) error {
	msg := "no frame to search"
	if target.Frame != "" {
		msg = fmt.Sprintf("no frame named %q or at an address holding it", target.Frame)
	}
	return withSkipped(&LocatorError{Code: "not_found", Target: target.String(), Message: msg}, skipped)
}

// action runs a form action through the page-action path: refused at once
// when the current document is not allowed, and checked again for the
// realm each step runs in.
func (t *Tab) action(ctx context.Context, method string, target Locator, opts FormOptions, do func(ctx context.Context) error) error {
	return t.act(ctx, method, target.String(), opts.DryRun, func(ctx context.Context) error {
		if err := t.checkSomeDocument(ctx); err != nil {
			return err
		}
		return do(ctx)
	})
}

// outcomeOf is an action's outcome in the log: "refused" for the site
// check's own refusal, else the error's code (see [CodeOf]).
func outcomeOf(err error) string {
	if refused(err) {
		return "refused"
	}
	return CodeOf(err)
}

// DefaultFormWait bounds how long a form action waits for its target when
// ctx has no deadline of its own; the runner gives every call one (30 s
// unless the script passes a timeout).
const DefaultFormWait = 30 * time.Second

// formBackoff are the pauses between checks of a target that is not ready:
// quick at first, then easing off. Each check itself waits for an
// animation frame where stability needs one.
var formBackoff = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// waitable reports whether a target can grow out of err by waiting: it
// may appear, show, be enabled or editable, stop moving, be uncovered, or
// get the option asked for. A ref that went stale stays stale, but the
// fresh ref a lookup made for this very check may fall to a re-render.
func waitable(err error, byRef bool) bool {
	var te *LocatorError
	if !errors.As(err, &te) {
		return false
	}
	switch te.Code {
	case "not_found", "hidden", "disabled", "readonly", "obscured", "not_stable", "no_option", "missing_part":
		return true
	case "stale_ref":
		return !byRef
	}
	return false
}

// until runs f until it succeeds, fails in a way waiting cannot mend, or
// ctx ends; then the last reason f gave is the error, with the time
// waited. It does not match ErrTimeout: the reason (not_found, obscured,
// …) is what the caller branches on.
func (t *Tab) until(ctx context.Context, byRef bool, f func(ctx context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultFormWait)
		defer cancel()
	}
	start := time.Now()
	var last, reason error
	for i := 0; ; i++ {
		last = f(ctx)
		if last == nil {
			return nil
		}
		if waitable(last, byRef) {
			reason = last
		} else if ctx.Err() == nil {
			return last
		}
		if ctx.Err() != nil {
			break
		}
		if d := formBackoff[min(i, len(formBackoff)-1)]; d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-tm.C:
			case <-ctx.Done():
				tm.Stop()
			case <-t.route.gone:
				tm.Stop()
				return t.route.err
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	var te *LocatorError
	if !errors.As(reason, &te) {
		return last
	}
	return editTarget(reason, func(*LocatorError) bool { return true }, func(te *LocatorError) { te.Waited = time.Since(start) })
}

// need tells the runtime's actionable which action a target must be ready
// for (see forms.js).
type need struct {
	Act      string            `json:"act"`
	Value    *string           `json:"value,omitempty"`
	Checked  *bool             `json:"checked,omitempty"`
	Options  []string          `json:"options"`
	Multiple bool              `json:"multiple,omitempty"`
	Parts    map[string]string `json:"parts,omitempty"`
	Dry      bool              `json:"dry,omitempty"`
	// Guard arms the check of where the click lands (see clickLanded).
	Guard bool `json:"guard,omitempty"`
}

// ready is a target found ready for an action, and where to click it.
type ready struct {
	Element
	X, Y      float64
	Checked   bool     `json:"checked"`
	Mode      string   `json:"mode"`  // fill: "type" or "set"; select: "native", "datalist", "combobox", "listbox" or "parts"
	Want      string   `json:"want"`  // fill "set": the value as the input reads it; select "datalist": what to type
	Value     string   `json:"value"` // native select: the label shown after choosing
	Values    []string `json:"values"`
	Committed bool     `json:"committed"` // native select: the page kept the choice
	Expanded  bool     `json:"expanded"`  // a combobox already open
}

// waitReady waits until target is ready for n. A {role, name} or {label}
// target is looked up in the accessibility tree on each try and then
// checked by its ref; other targets are found and checked in one call.
func (t *Tab) waitReady(ctx context.Context, target Locator, n need) (*ready, error) {
	desc := target.String()
	var r ready
	err := t.until(ctx, target.Ref != "", func(ctx context.Context) error {
		r = ready{}
		tg, fr := target, ""
		switch {
		case target.Ref != "":
			fr = t.frameOfRef(target.Ref)
		case axTarget(target) || target.Frame != "" || t.hasSubframes():
			// Found first (in the tree, or in whichever frame holds it),
			// then checked by ref in its frame.
			el, err := t.Resolve(ctx, target)
			if err != nil {
				return err
			}
			tg, fr = Locator{Ref: el.Ref}, el.frame
		}
		r.frame = fr
		if err := t.formCallIn(ctx, fr, desc, &r, "actionable", tg, n); err != nil || fr == "" {
			return t.inFrame(fr, err)
		}
		if n.Act == "fill" || r.Mode == "native" || r.Mode == "datalist" {
			return nil // nothing is clicked; keys go to the focused frame
		}
		// Clicks go to the page, so the point must be one the page shows.
		x, y, err := t.pagePoint(ctx, fr, r.X, r.Y)
		if err != nil {
			return named(err, desc)
		}
		r.X, r.Y = x, y
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.frame != "" {
		r.Element.Element.Frame = addressOf(t.frameURL(r.frame))
	}
	return &r, nil
}

// Fill types value into the text field target names, as a person would.
// It waits (see [Tab.ClickTarget]) until the field is there, visible,
// enabled, not read-only, still, and not under an overlay; then it
// focuses the field and selects its text; runs the host's Focus hook;
// types value as one trusted Input.insertText; reads it back, where a
// value the page did not keep is a *NotCommittedError; leaves the field
// so the page's validation runs; and returns the field's state.
//
// Inputs Chromium gives a picker (date, time, datetime-local, month,
// week, color, range) ignore typed text: their value is set the way the
// picker sets it (the element's own setter, then input and change
// events) and read back as the input reads it ("2024-03-05",
// "#ff8800"; a number for range, within its min, max and step). Number
// and range values are strings of numbers and compare as numbers.
func (t *Tab) Fill(ctx context.Context, target Locator, value string, opts FormOptions) (FieldState, error) {
	var st FieldState
	err := t.action(ctx, "fill", target, opts, func(ctx context.Context) error {
		n := need{Act: "fill"}
		if !opts.DryRun {
			n.Value = &value // focused and selected, or set, in the same call
		}
		el, err := t.waitReady(ctx, target, n)
		if err != nil || opts.DryRun {
			return err
		}
		desc := target.String()
		if opts.Focus != nil {
			if err := opts.Focus(ctx); err != nil {
				return fmt.Errorf("cdp: focus the tab: %w", err)
			}
		}
		want := value
		switch {
		case el.Mode == "set":
			want = el.Want
		case value == "":
			err = t.pressIn(ctx, el.frame, "Delete", 0) // insertText("") leaves the selection
		default:
			err = t.insertTextIn(ctx, el.frame, value)
		}
		if err != nil {
			return err
		}
		var got struct {
			FieldState
			Committed bool `json:"committed"`
		}
		if err := t.formCallIn(ctx, el.frame, desc, &got, "finish", el.Ref, want); err != nil {
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
// keep is ErrNotCommitted. A box already in the wanted state is left alone
// at once; otherwise it waits as [Tab.ClickTarget] does.
func (t *Tab) Check(ctx context.Context, target Locator, checked bool, opts FormOptions) error {
	return t.action(ctx, "check", target, opts, func(ctx context.Context) error {
		desc := target.String()
		el, err := t.clickReady(ctx, target, need{Act: "check", Checked: &checked, Dry: opts.DryRun}, func(el *ready) (bool, error) {
			if el.Kind == "radio" && !checked {
				return false, &LocatorError{Code: "bad_target", Target: desc, Message: "a radio button cannot be unchecked; check another one"}
			}
			return el.Checked != checked, nil
		})
		if err != nil || el == nil || opts.DryRun {
			return err
		}
		var got struct {
			Value bool `json:"value"`
		}
		if err := t.formCallIn(ctx, el.frame, desc, &got, "read", el.Ref); err != nil {
			return err
		}
		if got.Value != checked {
			return &NotCommittedError{Target: desc, Kept: fmt.Sprint(got.Value)}
		}
		return nil
	})
}

// clickReady waits until target is ready for n and clicks it, unless
// click (given the ready element) says no click is needed, or n is a dry
// run; it returns the element clicked (nil when none was). The runtime
// checks where the click lands: a click the page moved something into
// is held back before the page sees it and the whole wait starts again.
func (t *Tab) clickReady(ctx context.Context, target Locator, n need, click func(*ready) (bool, error)) (*ready, error) {
	desc := target.String()
	n.Guard = !n.Dry
	var el *ready
	err := t.until(ctx, target.Ref != "", func(ctx context.Context) (err error) {
		if el, err = t.waitReady(ctx, target, n); err != nil {
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
		t.forgetRefusals(el.frame)
		if err := t.clickIn(ctx, el.frame, el.X, el.Y); err != nil {
			return err
		}
		return t.clickNavigationRefused(el.frame, t.formCallIn(ctx, el.frame, desc, nil, "clickLanded"))
	})
	if err != nil {
		return nil, err
	}
	return el, nil
}

// Select chooses option, waiting for the target as [Tab.ClickTarget]
// does, and returns the choice the page shows afterwards; one that does
// not match option is ErrNotCommitted.
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
// click opens it; the option whose text matches is clicked once it shows,
// and when none does and the widget focused a filter field, option is
// typed there first. A native select a library hid behind such a widget
// resolves to the widget. The choice is read back from what the widget
// shows: a listbox's selected options, a closed combobox's value, or the
// text displayed in it or beside its filter input.
//
// With opts.Parts the dropdown is custom markup: a trusted click on the
// trigger, then on the option whose text matches, and the value part (or
// else what the target shows) is read back.
func (t *Tab) Select(ctx context.Context, target Locator, option string, opts FormOptions) (string, error) {
	var shown string
	err := t.action(ctx, "select", target, opts, func(ctx context.Context) (err error) {
		shown, err = t.choose(ctx, target, []string{option}, false, opts)
		return err
	})
	return shown, err
}

// SelectAll selects exactly options (each by label, else value) in a
// native <select multiple>, unselecting the rest, and returns the labels
// of the options selected afterwards; a different set is ErrNotCommitted.
// It waits as [Tab.Select] does.
func (t *Tab) SelectAll(ctx context.Context, target Locator, options []string, opts FormOptions) ([]string, error) {
	var shown []string
	err := t.action(ctx, "select", target, opts, func(ctx context.Context) error {
		n := need{Act: "select", Options: options, Multiple: true, Dry: opts.DryRun}
		if options == nil {
			n.Options = []string{}
		}
		el, err := t.waitReady(ctx, target, n)
		if err != nil {
			return err
		}
		desc := target.String()
		if el.Mode != "native" {
			return &LocatorError{Code: "not_select", Target: desc, Message: "not a native select", Candidates: []Candidate{el.Element.Element}}
		}
		shown = el.Values
		if !opts.DryRun && !el.Committed {
			return &NotCommittedError{Target: desc, Kept: strings.Join(shown, ", ")}
		}
		return nil
	})
	return shown, err
}

func (t *Tab) choose(ctx context.Context, target Locator, options []string, multiple bool, opts FormOptions) (string, error) {
	desc := target.String()
	n := need{Act: "select", Options: options, Multiple: multiple, Dry: opts.DryRun, Parts: opts.Parts}
	el, err := t.waitReady(ctx, target, n)
	if err != nil {
		return "", err
	}
	if el.Mode == "datalist" {
		if opts.DryRun {
			return "", nil
		}
		st, err := t.Fill(ctx, Locator{Ref: el.Ref}, el.Want, opts)
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
	if el.Mode == "parts" || (el.Mode == "combobox" && !el.Expanded) {
		if err := t.clickIn(ctx, el.frame, el.X, el.Y); err != nil {
			return "", err
		}
	}
	// The options usually render after the click, or only once the filter
	// holds some text: when none matches and the widget focused a filter
	// field, option is typed there, once.
	typed := false
	opened := time.Now()
	var at struct {
		X, Y float64
		Type bool `json:"type"`
	}
	err = t.until(ctx, false, func(ctx context.Context) error {
		at.Type = false
		err := t.formCallIn(ctx, el.frame, desc, &at, "optionAt", el.Ref, option, opts.Parts, typed)
		if err != nil && el.Mode == "combobox" && time.Since(opened) > reopenAfter {
			// A widget still settling from its last choice can let the
			// opening click pass; a person seeing it stay shut clicks again.
			var st struct {
				Expanded bool `json:"expanded"`
			}
			if e := t.formCallIn(ctx, el.frame, desc, &st, "shown", el.Ref, opts.Parts); e == nil && !st.Expanded {
				opened = time.Now()
				if e := t.clickIn(ctx, el.frame, el.X, el.Y); e != nil {
					return e
				}
			}
		}
		if err != nil {
			return err
		}
		if at.Type {
			typed = true
			if err := t.insertTextIn(ctx, el.frame, option); err != nil {
				return err
			}
			return &LocatorError{Code: "no_option", Target: desc, Message: "typed the option into the filter; waiting for it to show"}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	x, y, err := t.pagePoint(ctx, el.frame, at.X, at.Y)
	if err == nil {
		err = t.clickIn(ctx, el.frame, x, y)
	}
	if err != nil {
		return "", err
	}
	// Widgets may show the choice a task or a render later.
	var got struct {
		Value string `json:"value"`
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for i := 0; ; i++ {
		if err := t.formCallIn(ctx, el.frame, desc, &got, "shown", el.Ref, opts.Parts); err != nil {
			return "", err
		}
		if strings.Contains(strings.ToLower(got.Value), strings.ToLower(option)) {
			return got.Value, nil
		}
		select {
		case <-rctx.Done():
			return got.Value, &NotCommittedError{Target: desc, Kept: got.Value}
		case <-time.After(formBackoff[min(i+1, len(formBackoff)-1)]):
		}
	}
}

// reopenAfter is how long Select waits for a combobox's options after
// clicking it open before it checks the widget opened at all.
const reopenAfter = 500 * time.Millisecond

// ClickTarget clicks the element target names with a trusted click at the
// centre of its visible part, scrolling it into view first.
//
// Like every form action it waits for its target until ctx ends (a ctx
// with no deadline waits at most [DefaultFormWait]): until an element
// matches, is visible and enabled, holds the same box in two animation
// frames, and is what a click at its centre lands on, so an overlay or a
// spinner in front of it is waited out. Checks repeat with a short
// backoff and cost one round trip when the element is ready at once. When
// ctx ends first, the error is the last reason the target was not ready
// (ErrNotFound, ErrHidden, ErrDisabled, ErrObscured naming what covers
// it, ErrNotEditable for a read-only field), with [LocatorError.Waited]
// set. ErrAmbiguous, an invalid target and a stale ref fail at once, as
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
func (t *Tab) ClickTarget(ctx context.Context, target Locator, opts FormOptions) error {
	return t.action(ctx, "click", target, opts, func(ctx context.Context) error {
		_, err := t.clickReady(ctx, target, need{Act: "click", Dry: opts.DryRun}, nil)
		return err
	})
}

// PressTarget clicks the element target names, waiting for it as
// [Tab.ClickTarget] does, and presses key on it.
func (t *Tab) PressTarget(ctx context.Context, target Locator, key string, mods Modifier, opts FormOptions) error {
	if _, _, err := keyOf(key); err != nil {
		return err
	}
	return t.action(ctx, "press", target, opts, func(ctx context.Context) error {
		el, err := t.clickReady(ctx, target, need{Act: "click", Dry: opts.DryRun}, nil)
		if err != nil || opts.DryRun {
			return err
		}
		return t.pressIn(ctx, el.frame, key, mods)
	})
}

// SiteAllowed reports whether the page at rawURL is on one of sites. A site
// is a hostname ("example.com", matching only that host) or a wildcard
// ("*.example.com", matching any subdomain but not example.com itself),
// either with an optional port ("localhost:8080", "[::1]:3000") that the
// page's port, written or implied by its scheme, must then equal. Matching
// ignores case and a trailing dot, and ports when the site names none. Only
// http and https pages can match; a malformed URL or site never does.
func SiteAllowed(rawURL string, sites []string) bool {
	return matchSites(rawURL, sites, true)
}

// matchSites is SiteAllowed; without wildcards, only sites that name the
// page's host exactly count.
func matchSites(rawURL string, sites []string, wildcards bool) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := normHost(u.Hostname())
	if host == "" {
		return false
	}
	port := portOf(u)
	for _, s := range sites {
		h, p, ok := splitSite(s)
		if !ok || p != 0 && p != port {
			continue
		}
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			if wildcards && validHost(rest) && strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if validHost(h) && host == h {
			return true
		}
	}
	return false
}

// portOf is the port an http or https URL goes to: the one it writes, or
// its scheme's; -1 for one no server can have.
func portOf(u *url.URL) int {
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return 443
		}
		return 80
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return -1
	}
	return n
}

// splitSite reads a site as host, or host and port: "example.com",
// "example.com:8080", "[::1]:8080", "[::1]". A bare IPv6 address (more than
// one colon, no brackets) is all host. port is 0 when the site names none;
// ok is false for a port that is not a number from 1 to 65535, or an
// unclosed bracket.
func splitSite(site string) (host string, port int, ok bool) {
	s := normHost(site)
	rest := ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, false
		}
		s, rest = s[1:end], s[end+1:]
		if rest != "" && !strings.HasPrefix(rest, ":") {
			return "", 0, false
		}
	case strings.Count(s, ":") == 1:
		i := strings.Index(s, ":")
		s, rest = s[:i], s[i:]
	}
	if rest != "" {
		digits := rest[1:]
		n, err := strconv.Atoi(digits)
		if digits == "" || strings.Trim(digits, "0123456789") != "" || err != nil || n < 1 || n > 65535 {
			return "", 0, false
		}
		port = n
	}
	return strings.TrimSuffix(s, "."), port, true
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

func validHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "*/@ ") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return false
		}
	}
	return true
}

func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
