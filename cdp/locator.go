package cdp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/errcode"
)

// Locators: how a script names an element, what one resolves to, and
// the errors a lookup or an action ends with.

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

// String describes the element as an error lists it. Each text is the
// page's, of any length (an id, an option's value, an accessible name),
// so each is quoted cut as a target's are (shown).
func (c Candidate) String() string {
	s := "<" + c.Tag
	for _, kv := range [][2]string{{"id", c.ID}, {"name", c.Name}, {"type", c.Type}} {
		if kv[1] != "" {
			s += " " + kv[0] + "=" + shown(kv[1])
		}
	}
	s += ">"
	if c.Label != "" {
		s += " label " + shown(c.Label)
	} else if c.Text != "" {
		s += " text " + shown(c.Text)
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

// LocatorError reports why a target could not be used. It matches its
// code with errors.Is (errors.Is(err, errcode.Ambiguous)).
type LocatorError struct {
	Code       errcode.Code // such as errcode.Ambiguous
	Target     string       // the target, described
	Message    string
	Candidates []Candidate // the elements involved, when that helps
	// Waited is how long an action waited for its target before giving
	// up with this reason; 0 when it did not wait.
	Waited time.Duration
}

func (e *LocatorError) Error() string {
	s := e.Message
	if e.Target != "" {
		s = e.Target + ": " + s
	}
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

// ErrorCode is e.Code.
func (e *LocatorError) ErrorCode() errcode.Code { return e.Code }

// Is matches the error's code.
func (e *LocatorError) Is(target error) bool { return target == error(e.Code) }

// NotCommittedError reports a value the page did not keep (truncated,
// reformatted, rejected). Its code is not_committed.
type NotCommittedError struct {
	Target string
	// Kept is what the field holds instead.
	Kept string
}

func (e *NotCommittedError) Error() string {
	return fmt.Sprintf("%s: the page did not keep the value (it holds %d characters)", e.Target, len([]rune(e.Kept)))
}

// ErrorCode is not_committed.
func (e *NotCommittedError) ErrorCode() errcode.Code { return errcode.NotCommitted }

// Is matches errcode.NotCommitted.
func (e *NotCommittedError) Is(target error) bool { return target == error(errcode.NotCommitted) }

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
	// main frame and every frame in it. Only the outermost target sets it.
	Frame string `json:"frame,omitempty"`

	// Within limits the search to the inside of the elements Within names
	// (any of them: it may match several, as a row name may).
	Within *Locator `json:"within,omitempty"`
	// HasText keeps the matches whose text (hidden text and open shadow
	// trees included) holds HasText, ignoring case and runs of white space.
	HasText string `json:"hasText,omitempty"`
	// Has keeps the matches that hold an element Has names.
	Has *Locator `json:"has,omitempty"`
	// Nth picks one match by its place among all of them, disabled and
	// hidden ones included (a {role} or {label} target matches only what
	// the accessibility tree shows, so never an element hidden with
	// display: none), in document order (main frame first): 0 is the
	// first, -1 the last. It is the only way to accept a target that
	// matches more than one element; without it, more than one usable
	// match is errcode.Ambiguous.
	//
	// Nth works at every level of a target, after that level's filters.
	// In a Within part it picks among that part's matches (over every
	// frame searched): {Selector: "button", Within: {Selector: "p", Nth:
	// 0}} looks only inside the first paragraph, as Playwright's
	// locator("p").nth(0).locator("button") does. In a Has part it counts
	// the part's matches inside each element being filtered, as
	// Playwright's filter({has}) does: {Role: "row", Has: {Role: "cell",
	// Nth: 2}} keeps the rows that have a third cell.
	Nth *int `json:"nth,omitempty"`

	// local is Nth counted in the one frame searched, when Nth counts over
	// several (see pinScopes); descriptions keep Nth as it was given.
	local *int
}

// nth is the place a lookup picks at in the frame it searches.
func (t Locator) nth() *int {
	if t.local != nil {
		return t.local
	}
	return t.Nth
}

// maxLocatorDepth bounds how deeply Within and Has nest.
const maxLocatorDepth = 4

// composed reports whether loc has a scope, filters or nth.
func (t Locator) composed() bool {
	return t.Within != nil || t.Has != nil || t.HasText != "" || t.Nth != nil
}

// plain is loc without its scope, filters and pick: what one step of a
// lookup matches.
func (t Locator) plain() Locator {
	t.Within, t.Has, t.HasText, t.Nth, t.local = nil, nil, "", nil, nil
	return t
}

// String describes the target for logs and errors. It never includes a
// value being typed, and quotes at most maxShown bytes of each of the
// target's texts: a target is the script's, and a description built on
// every poll of a wait must cost the host little whatever the target holds.
func (t Locator) String() string {
	s := t.plain().way()
	if t.Within != nil {
		s += " within " + t.Within.part()
	}
	if t.HasText != "" {
		s += " with text " + shown(t.HasText)
	}
	if t.Has != nil {
		s += " holding " + t.Has.part()
	}
	if t.Nth != nil {
		s += fmt.Sprintf(" (nth %d)", *t.Nth)
	}
	return s
}

// part describes a within or has part, bracketed when it is composed,
// so that its filters and nth read as its own.
func (t Locator) part() string {
	if t.composed() {
		return "[" + t.String() + "]"
	}
	return t.String()
}

// way describes the one way the target finds its element.
func (t Locator) way() string {
	switch {
	case t.Ref != "":
		return "ref " + shown(t.Ref)
	case t.Role != "" && t.Name != "":
		return "role " + shown(t.Role) + " name " + shown(t.Name)
	case t.Role != "":
		return "role " + shown(t.Role)
	case t.Label != "":
		return "label " + shown(t.Label)
	case t.Placeholder != "":
		return "placeholder " + shown(t.Placeholder)
	case t.Name != "":
		return "name " + shown(t.Name)
	case t.Text != "":
		return "text " + shown(t.Text)
	case t.Selector != "":
		return "selector " + shown(t.Selector)
	case t.TestID != "":
		return "testId " + shown(t.TestID)
	}
	return "empty target"
}

// maxShown bounds each text of a target quoted in its description.
const maxShown = 200

// shown quotes s for a target's description, cut to maxShown bytes (never
// inside a character) with a note of how much is left out.
func shown(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	keep := maxShown
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return strconv.Quote(s[:keep]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

func (t Locator) validate() error { return t.Check() }

// Check refuses a locator that cannot name an element: one that sets no
// way of finding it or more than one (Role with Name is one way), or sets
// Exact with neither Role nor Label, the only ways it changes; and a
// Within or Has that is itself refused, sets Frame, or nests more than
// four deep. An empty string is no value. It returns a *LocatorError with
// code bad_target. The SDK's checkTarget holds scripts' targets to the
// same rule (the cases of testdata/locators.json test both).
func (t Locator) Check() error {
	return t.check(0)
}

func (t Locator) check(depth int) error {
	if err := t.checkWay(); err != nil {
		return err
	}
	for _, part := range []struct {
		name string
		loc  *Locator
	}{{"within", t.Within}, {"has", t.Has}} {
		if part.loc == nil {
			continue
		}
		msg := ""
		switch {
		case depth+1 >= maxLocatorDepth:
			msg = fmt.Sprintf("targets nest at most %d deep", maxLocatorDepth)
		case part.loc.Frame != "":
			msg = fmt.Sprintf(`"frame" goes on the outermost target, not in %q`, part.name)
		}
		if msg != "" {
			return &LocatorError{Code: "bad_target", Target: t.String(), Message: msg}
		}
		if err := part.loc.check(depth + 1); err != nil {
			return editTarget(err, func(*LocatorError) bool { return true }, func(te *LocatorError) {
				te.Message = fmt.Sprintf("its %q part: %s", part.name, te.Message)
				te.Target = t.String()
			})
		}
	}
	return nil
}

func (t Locator) checkWay() error {
	n := 0
	for _, s := range []string{t.Label, t.Placeholder, t.Text, t.Selector, t.TestID, t.Ref} {
		if s != "" {
			n++
		}
	}
	if t.Role != "" || t.Name != "" {
		n++
	}
	msg := ""
	switch {
	case n == 0:
		msg = "the target names no element"
	case n > 1:
		msg = "the target names more than one way to find the element"
	case t.Exact && t.Role == "" && t.Label == "":
		msg = `"exact" goes with {role, name} or {label}`
	default:
		return nil
	}
	return &LocatorError{Code: "bad_target", Target: t.String(), Message: msg}
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
	Outcome string // "ok", "dry-run", "refused", or an error code of [errcode.Codes] such as "not_committed"
}

// FormOptions configures a form action. The zero value acts as soon as the
// target is ready (see [Tab.ClickElement]); how long it waits is ctx's
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
