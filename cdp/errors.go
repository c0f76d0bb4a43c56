package cdp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mafredri/cdp/rpcc"
)

// Errors reported when a session ends. A *DetachedError matches ErrDetached
// and exactly one of the more specific reasons.
var (
	// ErrDetached matches every end of a tab session.
	ErrDetached = errors.New("cdp: session detached")
	// ErrTargetClosed reports that the page was closed.
	ErrTargetClosed = errors.New("cdp: target closed")
	// ErrTargetCrashed reports that the page's renderer crashed.
	ErrTargetCrashed = errors.New("cdp: target crashed")
	// ErrBrowserClosed reports that the connection to the browser is gone
	// (the browser exited or Browser.Close was called).
	ErrBrowserClosed = errors.New("cdp: browser connection closed")
)

// Other errors.
var (
	// ErrNotSupported reports a protocol method the browser does not offer,
	// such as Target.createTarget in Electron.
	ErrNotSupported = errors.New("cdp: not supported by this browser")
	// ErrMessageTooLarge reports a request larger than Options.MaxMessageSize.
	ErrMessageTooLarge = errors.New("cdp: message too large")
	// ErrEndpoint reports an endpoint Connect cannot use.
	ErrEndpoint = errors.New("cdp: bad endpoint")
	// ErrNavigation reports a navigation the browser refused or failed.
	ErrNavigation = errors.New("cdp: navigation failed")
)

// DetachedError says why a tab session ended.
type DetachedError struct {
	TargetID string
	// Reason is ErrTargetClosed, ErrTargetCrashed, ErrBrowserClosed or
	// ErrDetached.
	Reason error
	// Detail is the browser's own wording, when it gave one.
	Detail string
}

func (e *DetachedError) Error() string {
	s := e.Reason.Error()
	if e.TargetID != "" {
		s += " (target " + e.TargetID + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap lets errors.Is match both the reason and ErrDetached.
func (e *DetachedError) Unwrap() []error {
	if e.Reason == ErrDetached {
		return []error{ErrDetached}
	}
	return []error{e.Reason, ErrDetached}
}

// EvalError is a JavaScript exception thrown (or a promise rejected) by code
// run with [Tab.Evaluate] or [Tab.WaitFor].
type EvalError struct {
	// Name is the error's class, such as "TypeError"; empty when a
	// non-Error value was thrown.
	Name string
	// Message is the error message, or the JSON of a thrown non-Error value.
	Message string
	// Stack is the stack as the page printed it, when there is one.
	Stack string
	// Line and Column locate the throw, 1-based, within the evaluated
	// function's source.
	Line, Column int
}

func (e *EvalError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("cdp: evaluate: %s: %s (line %d, column %d)", e.Name, e.Message, e.Line, e.Column)
	}
	return fmt.Sprintf("cdp: evaluate: uncaught %s (line %d, column %d)", e.Message, e.Line, e.Column)
}

// WaitTimeoutError reports a condition that did not hold before the context
// ended. It wraps the context's error.
type WaitTimeoutError struct {
	// What describes the condition, such as `selector "#done"`.
	What string
	// Err is the context error (context.DeadlineExceeded or Canceled).
	Err error
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("cdp: wait for %s: %v", e.What, e.Err)
}

func (e *WaitTimeoutError) Unwrap() error { return e.Err }

// protocolError returns the browser's error reply inside err, if any.
func protocolError(err error) *rpcc.ResponseError {
	var re *rpcc.ResponseError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// contextGone reports errors that mean "the JavaScript realm you named no
// longer exists", which a navigation causes. Calls that hit one may be
// retried in the new document.
func contextGone(err error) bool {
	re := protocolError(err)
	if re == nil {
		return false
	}
	m := re.Message
	return strings.Contains(m, "Cannot find context with specified id") ||
		strings.Contains(m, "Inspected target navigated or closed") ||
		strings.Contains(m, "Execution context was destroyed") ||
		strings.Contains(m, "uniqueContextId not found")
}
