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
	"strings"
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
	return s
}

// TargetError reports why a target could not be used.
type TargetError struct {
	Code       string // the runtime's code, e.g. "ambiguous"
	Target     string // the target, described
	Message    string
	Candidates []Candidate // the elements involved, when that helps
}

func (e *TargetError) Error() string {
	s := fmt.Sprintf("cdp: %s: %s", e.Target, e.Message)
	if len(e.Candidates) > 0 {
		parts := make([]string, len(e.Candidates))
		for i, c := range e.Candidates {
			parts[i] = c.String()
		}
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// Is matches the sentinel for the error's code.
func (e *TargetError) Is(target error) bool { return codeErrors[e.Code] == target }

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

// Target names an element for the form actions. Set exactly one way of
// finding it; Role may be combined with Name, which then means the
// accessible name rather than the name attribute.
type Target struct {
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
}

// String describes the target for logs and errors. It never includes a
// value being typed.
func (t Target) String() string {
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

func (t Target) validate() error {
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
		return &TargetError{Code: "bad_target", Target: t.String(), Message: "set exactly one way to find the element"}
	}
	return nil
}

// Element is a resolved target.
type Element struct {
	// Ref names the element in later calls (Target{Ref: …}) until the page
	// navigates or removes it.
	Ref string `json:"ref"`
	// Kind is "text", "checkbox", "radio", "select" or "other".
	Kind string `json:"kind"`
	// Element describes it.
	Element Candidate `json:"element"`
	// Skipped lists hidden or disabled elements that also matched and were
	// passed over.
	Skipped []Candidate `json:"skipped"`
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
	Method  string // "fill", "check", "select", "click", "press"
	Target  string // the target, described
	Site    string // host of the page
	Outcome string // "ok", "dry-run", "refused", or an error code such as "not_committed"
}

// FormOptions configures a form action. The zero value acts at once. Which
// sites an action may run on, and where it is logged, belong to the tab
// (see [TabOptions]).
type FormOptions struct {
	// DryRun resolves and checks the target (and custom parts), logs the
	// write it would have made, and changes nothing.
	DryRun bool
	// Focus is the host's hook to give the tab keyboard focus before
	// typing. Nil skips it.
	Focus func(context.Context) error
	// Parts are selectors for a custom dropdown, used by Select: "trigger"
	// (opens it; default the target itself), "option" (its options,
	// matched by text) and "value" (shows the chosen value; default the
	// target). They are looked up in the isolated world, never run.
	Parts map[string]string
}

// formCall runs one runtime method in the isolated world.
func (t *Tab) formCall(ctx context.Context, target string, out any, method string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	cargs, err := callArgs([]any{formsHash, method, args})
	if err != nil {
		return err
	}
	raw, err := t.call(ctx, sdkWorld, formsWrapper, cargs)
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
		return &TargetError{Code: res.Code, Target: target, Message: res.Message, Candidates: res.Candidates}
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
// match is ErrAmbiguous, listing the candidates.
func (t *Tab) Resolve(ctx context.Context, target Target) (*Element, error) {
	if err := target.validate(); err != nil {
		return nil, err
	}
	if axTarget(target) {
		// Roles and names as the browser computes them; the runtime's own
		// reading of labels stays as a fallback for what the tree does not
		// name that way (a label that is not the control's accessible name).
		el, err := t.resolveAX(ctx, target)
		if !errors.Is(err, ErrNotFound) || target.Label == "" {
			return el, err
		}
	}
	var el Element
	if err := t.formCall(ctx, target.String(), &el, "resolve", target); err != nil {
		return nil, err
	}
	return &el, nil
}

// action runs a form action through the page-action path: refused at once
// when the current document is not allowed, and checked again for the
// realm each step runs in.
func (t *Tab) action(ctx context.Context, method string, target Target, opts FormOptions, do func(ctx context.Context) error) error {
	return t.act(ctx, method, target.String(), opts.DryRun, func(ctx context.Context) error {
		if err := t.checkDocument(ctx); err != nil {
			return err
		}
		return do(ctx)
	})
}

func outcomeOf(err error) string {
	var te *TargetError
	switch {
	case refused(err):
		return "refused"
	case errors.Is(err, ErrNavigationBlocked):
		return "navigation_blocked"
	case errors.As(err, &te):
		return te.Code
	case errors.Is(err, ErrNotCommitted):
		return "not_committed"
	case errors.Is(err, ErrDetached):
		return "detached"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	}
	var ee *EvalError
	if errors.As(err, &ee) {
		return "page_error"
	}
	return "error"
}

// Fill types value into the text field target names, as a person would:
// resolve; prepareText (scroll into view, focus, select the existing text);
// the host's Focus hook; one trusted Input.insertText; read back, where a
// value the page did not keep is a *NotCommittedError; commit (leave the
// field so the page's validation runs); and the field's state as result.
func (t *Tab) Fill(ctx context.Context, target Target, value string, opts FormOptions) (FieldState, error) {
	var st FieldState
	err := t.action(ctx, "fill", target, opts, func(ctx context.Context) error {
		el, err := t.Resolve(ctx, target)
		if err != nil {
			return err
		}
		if el.Kind != "text" {
			return &TargetError{Code: "not_editable", Target: target.String(), Message: "the element does not take text", Candidates: []Candidate{el.Element}}
		}
		if opts.DryRun {
			return nil
		}
		desc := target.String()
		if err := t.formCall(ctx, desc, nil, "prepareText", el.Ref); err != nil {
			return err
		}
		if opts.Focus != nil {
			if err := opts.Focus(ctx); err != nil {
				return fmt.Errorf("cdp: focus the tab: %w", err)
			}
		}
		if value == "" {
			err = t.Press(ctx, "Delete", 0) // insertText("") leaves the selection
		} else {
			err = t.InsertText(ctx, value)
		}
		if err != nil {
			return err
		}
		var got struct {
			Value string `json:"value"`
		}
		if err := t.formCall(ctx, desc, &got, "read", el.Ref); err != nil {
			return err
		}
		if got.Value != value {
			return &NotCommittedError{Target: desc, Kept: got.Value}
		}
		return t.formCall(ctx, desc, &st, "commit", el.Ref)
	})
	return st, err
}

// Check sets a checkbox or radio to checked (or a checkbox to unchecked)
// with a trusted click, then reads the state back; a state the page did not
// keep is ErrNotCommitted. A box already in the wanted state is left alone.
func (t *Tab) Check(ctx context.Context, target Target, checked bool, opts FormOptions) error {
	return t.action(ctx, "check", target, opts, func(ctx context.Context) error {
		el, err := t.Resolve(ctx, target)
		if err != nil {
			return err
		}
		desc := target.String()
		if el.Kind != "checkbox" && el.Kind != "radio" {
			return &TargetError{Code: "bad_target", Target: desc, Message: "not a checkbox or radio", Candidates: []Candidate{el.Element}}
		}
		if el.Kind == "radio" && !checked {
			return &TargetError{Code: "bad_target", Target: desc, Message: "a radio button cannot be unchecked; check another one"}
		}
		var got struct {
			Value bool `json:"value"`
		}
		if err := t.formCall(ctx, desc, &got, "read", el.Ref); err != nil {
			return err
		}
		if opts.DryRun || got.Value == checked {
			return nil
		}
		if err := t.clickRef(ctx, desc, el.Ref, "point"); err != nil {
			return err
		}
		if err := t.formCall(ctx, desc, &got, "read", el.Ref); err != nil {
			return err
		}
		if got.Value != checked {
			return &NotCommittedError{Target: desc, Kept: fmt.Sprint(got.Value)}
		}
		return nil
	})
}

func (t *Tab) clickRef(ctx context.Context, desc, ref, method string, args ...any) error {
	var p struct{ X, Y float64 }
	if err := t.formCall(ctx, desc, &p, method, append([]any{ref}, args...)...); err != nil {
		return err
	}
	return t.Click(ctx, p.X, p.Y)
}

// Select chooses option (by its label, else by its value) in a native
// <select>, or, with opts.Parts, in a custom dropdown: a trusted click on
// the trigger, then on the option whose text matches. It returns the label
// the page shows afterwards; one that does not match is ErrNotCommitted.
func (t *Tab) Select(ctx context.Context, target Target, option string, opts FormOptions) (string, error) {
	var shown string
	err := t.action(ctx, "select", target, opts, func(ctx context.Context) error {
		el, err := t.Resolve(ctx, target)
		if err != nil {
			return err
		}
		desc := target.String()
		if opts.Parts == nil {
			if el.Kind != "select" {
				return &TargetError{Code: "not_select", Target: desc, Message: "not a native select; pass custom parts", Candidates: []Candidate{el.Element}}
			}
			if opts.DryRun {
				return nil
			}
			var got struct {
				Value string `json:"value"`
			}
			if err := t.formCall(ctx, desc, &got, "selectOption", el.Ref, option); err != nil {
				return err
			}
			shown = got.Value
			return nil
		}
		if err := t.formCall(ctx, desc, nil, "checkParts", el.Ref, opts.Parts); err != nil {
			return err
		}
		if opts.DryRun {
			return nil
		}
		if err := t.clickRef(ctx, desc, el.Ref, "partPoint", opts.Parts, "trigger", nil); err != nil {
			return err
		}
		// The options usually render after the click; wait for one to match.
		if err := t.WaitFor(ctx, Condition{
			what: "option " + fmt.Sprintf("%q", option), world: sdkWorld,
			fn:   "function (h, ref, parts, text) { return globalThis.__tqFormsHash === h && globalThis.__tqForms.partPoint(ref, parts, 'option', text).ok === true }",
			args: []any{formsHash, el.Ref, opts.Parts, option},
		}); err != nil {
			return err
		}
		if err := t.clickRef(ctx, desc, el.Ref, "partPoint", opts.Parts, "option", option); err != nil {
			return err
		}
		var got struct {
			Value string `json:"value"`
		}
		if err := t.formCall(ctx, desc, &got, "readPart", el.Ref, opts.Parts); err != nil {
			return err
		}
		shown = got.Value
		if !strings.Contains(strings.ToLower(got.Value), strings.ToLower(option)) {
			return &NotCommittedError{Target: desc, Kept: got.Value}
		}
		return nil
	})
	return shown, err
}

// ClickTarget clicks the element target names with a trusted click at its
// centre, after scrolling it into view; an element covered by another is
// ErrObscured.
func (t *Tab) ClickTarget(ctx context.Context, target Target, opts FormOptions) error {
	return t.action(ctx, "click", target, opts, func(ctx context.Context) error {
		el, err := t.Resolve(ctx, target)
		if err != nil || opts.DryRun {
			return err
		}
		return t.clickRef(ctx, target.String(), el.Ref, "point")
	})
}

// PressTarget focuses the element target names and presses key on it.
func (t *Tab) PressTarget(ctx context.Context, target Target, key string, mods Modifier, opts FormOptions) error {
	if _, _, err := keyOf(key); err != nil {
		return err
	}
	return t.action(ctx, "press", target, opts, func(ctx context.Context) error {
		el, err := t.Resolve(ctx, target)
		if err != nil || opts.DryRun {
			return err
		}
		if err := t.clickRef(ctx, target.String(), el.Ref, "point"); err != nil {
			return err
		}
		return t.Press(ctx, key, mods)
	})
}

// SiteAllowed reports whether the page at rawURL is on one of sites. A site
// is a hostname ("example.com", matching only that host) or a wildcard
// ("*.example.com", matching any subdomain but not example.com itself).
// Matching ignores case, ports and a trailing dot. Only http and https pages
// can match; a malformed URL or site never does.
func SiteAllowed(rawURL string, sites []string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := normHost(u.Hostname())
	if host == "" {
		return false
	}
	for _, s := range sites {
		s = normHost(s)
		if rest, ok := strings.CutPrefix(s, "*."); ok {
			if validHost(rest) && strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if validHost(s) && host == s {
			return true
		}
	}
	return false
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
