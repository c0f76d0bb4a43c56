package errcode

import (
	"context"
	"errors"
)

// Code names why a call failed. Scripts branch on it, so a code's string
// never changes once released.
type Code string

// The codes, in the order of [Codes].
const (
	NotFound          Code = "not_found"
	Ambiguous         Code = "ambiguous"
	Hidden            Code = "hidden"
	Disabled          Code = "disabled"
	Readonly          Code = "readonly"
	NotEditable       Code = "not_editable"
	NotFocusable      Code = "not_focusable"
	NotStable         Code = "not_stable"
	Obscured          Code = "obscured"
	NoOption          Code = "no_option"
	NotSelect         Code = "not_select"
	BadParts          Code = "bad_parts"
	MissingPart       Code = "missing_part"
	BadTarget         Code = "bad_target"
	StaleRef          Code = "stale_ref"
	NotCommitted      Code = "not_committed"
	SiteNotAllowed    Code = "site_not_allowed"
	NavigationBlocked Code = "navigation_blocked"
	Navigation        Code = "navigation"
	Timeout           Code = "timeout"
	Cancelled         Code = "cancelled"
	ExpectationFailed Code = "expectation_failed"
	Closed            Code = "closed"
	EvalError         Code = "eval_error"
	NotSerializable   Code = "not_serializable"
	Invalid           Code = "invalid"
	NotGranted        Code = "not_granted"
	LimitExceeded     Code = "limit_exceeded"
	Error             Code = "error"
)

var table = []struct {
	code    Code
	meaning string
}{
	{NotFound, "no element matches the target"},
	{Ambiguous, "more than one usable element matches"},
	{Hidden, "the only matches are hidden"},
	{Disabled, "the only matches are disabled"},
	{Readonly, "the field is read-only"},
	{NotEditable, "the element does not take text"},
	{NotFocusable, "the element cannot take focus"},
	{NotStable, "the element kept moving"},
	{Obscured, "something else would get the click"},
	{NoOption, "the select has no such option"},
	{NotSelect, "not a native select, combobox or listbox"},
	{BadParts, "the custom parts given are not usable selectors"},
	{MissingPart, "a custom part is not on the page"},
	{BadTarget, "the target is malformed or names the wrong kind of element"},
	{StaleRef, "the ref's element is gone"},
	{NotCommitted, "the page did not keep the value"},
	{SiteNotAllowed, "the document is not on the tab's sites"},
	{NavigationBlocked, "the page policy refused the address"},
	{Navigation, "the navigation failed or was cancelled"},
	{Timeout, "the call ran out of time"},
	{Cancelled, "the run is ending: the call was cut short"},
	{ExpectationFailed, "what was expected of the page did not come in time"},
	{Closed, "the tab or the browser is gone"},
	{EvalError, "the page's code threw"},
	{NotSerializable, "a result cannot come back as JSON"},
	{Invalid, "an argument is not valid"},
	{NotGranted, "the script's permissions do not allow it"},
	{LimitExceeded, "a limit of the host was reached"},
	{Error, "anything else"},
}

// Codes returns every code, in a fixed order.
func Codes() []Code {
	out := make([]Code, len(table))
	for i, e := range table {
		out[i] = e.code
	}
	return out
}

// Meaning says what the code means, in a few words; "" for a string that
// is not in the table.
func (c Code) Meaning() string {
	for _, e := range table {
		if e.code == c {
			return e.meaning
		}
	}
	return ""
}

// Error makes a code an error of its own, so that errors.Is(err,
// errcode.NotFound) holds for the errors of this module whose code is
// NotFound (their Is methods compare codes).
func (c Code) Error() string { return string(c) }

// ErrorCode makes a code its own [Coder].
func (c Code) ErrorCode() Code { return c }

// Coder is an error that carries a code.
type Coder interface {
	error
	ErrorCode() Code
}

// Of is the code of err: Cancelled when its chain holds context.Canceled;
// else that of the first [Coder] in its chain; Timeout for a deadline;
// Error for anything else; "" for nil.
func Of(err error) Code {
	var c Coder
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled):
		// Whatever the call was doing, it was called off: a wait cut short
		// by the end of its run did not run out of time.
		return Cancelled
	case errors.As(err, &c):
		return c.ErrorCode()
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	return Error
}
