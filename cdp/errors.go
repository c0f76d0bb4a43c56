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
	// ErrMessageTooLarge reports a request or reply larger than
	// Options.MaxMessageSize.
	ErrMessageTooLarge = errors.New("cdp: message too large")
	// ErrEndpoint reports an endpoint Connect cannot use, or a
	// [PagePolicy] deny entry that is not a loopback endpoint.
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

// ErrTimeout matches a bounded wait that ran out: a condition that did not
// hold in time ([*WaitTimeoutError]). Package launch reports a browser that
// did not come up in time with this same error (as launch.ErrTimeout), so
// [CodeOf] gives both CodeTimeout.
var ErrTimeout = errors.New("cdp: timed out")

// Is lets a wait that ran out match ErrTimeout as well as the context error.
func (e *WaitTimeoutError) Is(target error) bool { return target == ErrTimeout }

// ErrNavigationBlocked matches every navigation or request the page policy
// refused: an address that is not http or https, or an endpoint of the host.
var ErrNavigationBlocked = errors.New("cdp: navigation blocked by the page policy")

// NavigationBlockedError is a navigation the page policy refused. It
// matches ErrNavigationBlocked.
type NavigationBlockedError struct {
	URL    string
	Reason string
}

func (e *NavigationBlockedError) Error() string {
	return fmt.Sprintf("cdp: navigation to %s blocked: %s", shorten(e.URL, 200), e.Reason)
}

func (e *NavigationBlockedError) Is(target error) bool { return target == ErrNavigationBlocked }

// SiteError is a page action refused because the document it would run in
// is not on the tab's allowed sites. It matches ErrSiteNotAllowed.
type SiteError struct {
	Method string // the action, such as "evaluate" or "fill"
	Site   string // host of the document, or its scheme when it has none
	Sites  []string
	// Grant, when set, is the grant that would allow it: the document is
	// on this computer or the local network, which takes a site of its own
	// ("add sites=127.0.0.1:8080 to reach a service on this computer").
	Grant string
}

func (e *SiteError) Error() string {
	if e.Grant != "" {
		return fmt.Sprintf("cdp: %s refused on %s: %s", e.Method, e.Site, e.Grant)
	}
	if e.Sites == nil {
		return fmt.Sprintf("cdp: %s refused: the document at %s is not a web page", e.Method, e.Site)
	}
	return fmt.Sprintf("cdp: %s refused on %s: allowed sites are %s", e.Method, e.Site, strings.Join(e.Sites, ", "))
}

func (e *SiteError) Is(target error) bool { return target == ErrSiteNotAllowed }

// shorten cuts s to at most n characters for a message, never inside one.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
