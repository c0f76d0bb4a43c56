package cdp

import (
	"context"
	"errors"
)

// Error codes. Every failure of a page action carries one code from this
// table, and the same code goes everywhere: CodeOf gives it for an error,
// the action log records it as the outcome ([Action]), the runner sends it
// to scripts, and the SDK's TabErrorCode union lists exactly these (a test
// holds the two to each other). [Codes] says what each means.
const (
	CodeNotFound          = "not_found"
	CodeAmbiguous         = "ambiguous"
	CodeHidden            = "hidden"
	CodeDisabled          = "disabled"
	CodeReadonly          = "readonly"
	CodeNotEditable       = "not_editable"
	CodeNotFocusable      = "not_focusable"
	CodeNotStable         = "not_stable"
	CodeObscured          = "obscured"
	CodeNoOption          = "no_option"
	CodeNotSelect         = "not_select"
	CodeBadParts          = "bad_parts"
	CodeMissingPart       = "missing_part"
	CodeBadTarget         = "bad_target"
	CodeStaleRef          = "stale_ref"
	CodeNotCommitted      = "not_committed"
	CodeSiteNotAllowed    = "site_not_allowed"
	CodeNavigationBlocked = "navigation_blocked"
	CodeNavigation        = "navigation"
	CodeTimeout           = "timeout"
	CodeClosed            = "closed"
	CodeEvalError         = "eval_error"
	CodeNotSerializable   = "not_serializable"
	CodeInvalid           = "invalid"
	CodeNotGranted        = "not_granted"
	CodeLimitExceeded     = "limit_exceeded"
	CodeError             = "error"
)

// CodeInfo is one code and what it means.
type CodeInfo struct {
	Code    string
	Meaning string
}

// Codes returns every code with its meaning, in a fixed order.
func Codes() []CodeInfo {
	return []CodeInfo{
		{CodeNotFound, "no element matches the target"},
		{CodeAmbiguous, "more than one usable element matches"},
		{CodeHidden, "the only matches are hidden"},
		{CodeDisabled, "the only matches are disabled"},
		{CodeReadonly, "the field is read-only"},
		{CodeNotEditable, "the element does not take text"},
		{CodeNotFocusable, "the element cannot take focus"},
		{CodeNotStable, "the element kept moving"},
		{CodeObscured, "something else would get the click"},
		{CodeNoOption, "the select has no such option"},
		{CodeNotSelect, "not a native select, combobox or listbox"},
		{CodeBadParts, "the custom parts given are not usable selectors"},
		{CodeMissingPart, "a custom part is not on the page"},
		{CodeBadTarget, "the target is malformed or names the wrong kind of element"},
		{CodeStaleRef, "the ref's element is gone"},
		{CodeNotCommitted, "the page did not keep the value"},
		{CodeSiteNotAllowed, "the document is not on the tab's sites"},
		{CodeNavigationBlocked, "the page policy refused the address"},
		{CodeNavigation, "the navigation failed or was cancelled"},
		{CodeTimeout, "the call ran out of time"},
		{CodeClosed, "the tab or the browser is gone"},
		{CodeEvalError, "the page's code threw"},
		{CodeNotSerializable, "a result cannot come back as JSON"},
		{CodeInvalid, "an argument is not valid"},
		{CodeNotGranted, "the script's permissions do not allow it"},
		{CodeLimitExceeded, "a limit of the host was reached"},
		{CodeError, "anything else"},
	}
}

// CodeOf is the code of an error this package returned.
func CodeOf(err error) string {
	var te *LocatorError
	var ee *EvalError
	var wt *WaitTimeoutError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNotCommitted):
		return CodeNotCommitted
	case errors.Is(err, ErrStaleRef):
		return CodeStaleRef
	case errors.Is(err, ErrSiteNotAllowed):
		return CodeSiteNotAllowed
	case errors.Is(err, ErrNavigationBlocked):
		return CodeNavigationBlocked
	case errors.As(err, &wt), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, ErrTimeout):
		return CodeTimeout
	case errors.Is(err, ErrNavigation):
		return CodeNavigation
	case errors.Is(err, ErrDetached), errors.Is(err, ErrBrowserClosed):
		return CodeClosed
	case errors.As(err, &te):
		return te.Code
	case errors.As(err, &ee):
		return CodeEvalError
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrNotAFile):
		return CodeInvalid
	}
	return CodeError
}
