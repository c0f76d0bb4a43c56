package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mafredri/cdp/rpcc"

	"github.com/tranquil/automation/display"
	"github.com/tranquil/automation/errcode"
)

// Every error a page action returns carries a code of the one table
// ([errcode.Of] finds it) and matches it with errors.Is
// (errors.Is(err, errcode.NotFound)). Messages are written for the person
// who made the call: they name what was waited for or refused, never a
// protocol method or Go's context wording.

// codedError is an error of this package with a code and nothing more to
// say than its message.
type codedError struct {
	code errcode.Code
	err  error // the message, and what it wraps
}

// codeErr makes a codedError; format may use %w.
func codeErr(code errcode.Code, format string, args ...any) error {
	return &codedError{code: code, err: fmt.Errorf(format, args...)}
}

func (e *codedError) Error() string           { return e.err.Error() }
func (e *codedError) Unwrap() error           { return e.err }
func (e *codedError) ErrorCode() errcode.Code { return e.code }
func (e *codedError) Is(target error) bool    { return target == error(e.code) }

// Errors reported when a session ends: each has code closed. A
// *DetachedError matches ErrDetached and exactly one of the more specific
// reasons.
var (
	// ErrDetached matches every end of a tab session.
	ErrDetached = codeErr(errcode.Closed, "the tab's session ended")
	// ErrTargetClosed reports that the page was closed.
	ErrTargetClosed = codeErr(errcode.Closed, "the tab was closed")
	// ErrTargetCrashed reports that the page's renderer crashed.
	ErrTargetCrashed = codeErr(errcode.Closed, "the tab's page crashed")
	// ErrBrowserClosed reports that the connection to the browser is gone
	// (the browser exited or Browser.Close was called).
	ErrBrowserClosed = codeErr(errcode.Closed, "the browser is gone")
)

// Other errors.
var (
	// ErrNotSupported reports a protocol method the browser does not offer,
	// such as Target.createTarget in Electron.
	ErrNotSupported = codeErr(errcode.Error, "not supported by this browser")
	// ErrMessageTooLarge reports a request or reply larger than
	// Options.MaxMessageSize.
	ErrMessageTooLarge = codeErr(errcode.Error, "message too large for the connection to the browser")
	// ErrOverBudget reports a reply to a tab's page call that was larger
	// than what its [TabOptions.Meter] had left, or that the meter refused:
	// it was read past, never built. Its code is limit_exceeded.
	ErrOverBudget = codeErr(errcode.LimitExceeded, "past the memory budget")
	// ErrEndpoint reports an endpoint Connect cannot use, or a
	// [PagePolicy] deny entry that is not a loopback endpoint. It is the
	// host's mistake, never a script's, so it has no code.
	ErrEndpoint = errors.New("cdp: bad endpoint")
)

// DetachedError says why a tab session ended. Its code is closed.
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

// ErrorCode is closed.
func (e *DetachedError) ErrorCode() errcode.Code { return errcode.Closed }

// Unwrap lets errors.Is match both the reason and ErrDetached.
func (e *DetachedError) Unwrap() []error {
	if e.Reason == ErrDetached {
		return []error{ErrDetached}
	}
	return []error{e.Reason, ErrDetached}
}

// EvalError is a JavaScript exception thrown (or a promise rejected) by code
// run with [Tab.Evaluate] or [Tab.WaitFor]. Its code is eval_error.
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
		return fmt.Sprintf("the page's code threw %s: %s (line %d, column %d)", e.Name, e.Message, e.Line, e.Column)
	}
	return fmt.Sprintf("the page's code threw %s (line %d, column %d)", e.Message, e.Line, e.Column)
}

// ErrorCode is eval_error.
func (e *EvalError) ErrorCode() errcode.Code { return errcode.EvalError }

// Is matches errcode.EvalError.
func (e *EvalError) Is(target error) bool { return target == error(errcode.EvalError) }

// waitedSince is how long a wait that began at start went on: when its
// context ran out at its deadline, the time it was given (what the caller
// asked for, and the same on a busy machine as on a quiet one), else the
// time it took.
func waitedSince(ctx context.Context, start time.Time) time.Duration {
	if d, ok := ctx.Deadline(); ok && errors.Is(ctx.Err(), context.DeadlineExceeded) && d.After(start) {
		return d.Sub(start)
	}
	return time.Since(start)
}

// WaitTimeoutError reports a condition that did not hold before the context
// ended. It wraps the context's error; its code is timeout.
type WaitTimeoutError struct {
	// What describes the condition, such as `selector "#done"`.
	What string
	// Err is the context error (context.DeadlineExceeded or Canceled).
	Err error
	// Waited is how long the condition was waited for; 0 when unknown.
	Waited time.Duration
	// Seen is what the last check found instead, such as "no element
	// matches it"; "" when unknown.
	Seen string
}

func (e *WaitTimeoutError) Error() string {
	if errors.Is(e.Err, context.Canceled) {
		return fmt.Sprintf("stopped waiting for %s: the call was cancelled", e.What)
	}
	s := "timed out waiting for " + e.What
	if e.Waited > 0 {
		// To 10 ms: a timer's lateness is no news.
		s = fmt.Sprintf("waited %s for %s", waited(e.Waited.Round(10*time.Millisecond)), e.What)
	}
	if e.Seen != "" {
		s += "; last seen: " + e.Seen
	}
	return s
}

// ErrorCode is timeout.
func (e *WaitTimeoutError) ErrorCode() errcode.Code { return errcode.Timeout }

func (e *WaitTimeoutError) Unwrap() error { return e.Err }

// protocolError returns the browser's error reply inside err, if any.
func protocolError(err error) *rpcc.ResponseError {
	var re *rpcc.ResponseError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// sessionGone reports the browser's answer to a call on a session it no
// longer has (Chromium: "Session with given id not found.").
func sessionGone(re *rpcc.ResponseError) bool {
	return strings.HasPrefix(re.Message, "Session with given id not found")
}

// goneWait is how long a call the browser answered with "no such
// session" waits for the detach event that says why: the answer may
// overtake the event.
const goneWait = 500 * time.Millisecond

// goneWhile is the error of a call whose session the browser no longer
// knows. When the tab's own session ends soon after (the tab was closed
// or crashed, or the browser went away while the call ran), it is that
// session's reason: a closed tab. Otherwise the session was another one
// of the tab's (a frame's that went away), and the browser's refusal
// stands.
func (t *Tab) goneWhile(re *rpcc.ResponseError) error {
	timer := time.NewTimer(goneWait)
	defer timer.Stop()
	select {
	case <-t.route.gone:
		return t.route.err
	case <-timer.C:
		return codeErr(errcode.Error, "the browser refused the call: %s", re.Message)
	}
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
// [errcode.Of] gives both the code timeout.
var ErrTimeout = codeErr(errcode.Timeout, "timed out")

// Is lets a wait that ran out match ErrTimeout and errcode.Timeout as well
// as the context error.
func (e *WaitTimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == error(errcode.Timeout)
}

// NavigationBlockedError is a navigation or request the page policy
// refused: an address that is not http or https, or an endpoint of the
// host. Its code is navigation_blocked.
type NavigationBlockedError struct {
	URL    string
	Reason string
}

func (e *NavigationBlockedError) Error() string {
	return fmt.Sprintf("navigation to %s blocked: %s", shorten(e.URL, 200), e.Reason)
}

// ErrorCode is navigation_blocked.
func (e *NavigationBlockedError) ErrorCode() errcode.Code { return errcode.NavigationBlocked }

// Is matches errcode.NavigationBlocked.
func (e *NavigationBlockedError) Is(target error) bool {
	return target == error(errcode.NavigationBlocked)
}

// SiteError is a page action refused because the document it would run in
// is not on the tab's allowed sites. Its code is site_not_allowed.
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
		return fmt.Sprintf("%s refused on %s: %s", e.Method, e.Site, e.Grant)
	}
	if e.Sites == nil {
		return fmt.Sprintf("%s refused: the document at %s is not a web page", e.Method, e.Site)
	}
	return fmt.Sprintf("%s refused on %s: allowed sites are %s", e.Method, e.Site, strings.Join(e.Sites, ", "))
}

// ErrorCode is site_not_allowed.
func (e *SiteError) ErrorCode() errcode.Code { return errcode.SiteNotAllowed }

// Is matches errcode.SiteNotAllowed.
func (e *SiteError) Is(target error) bool { return target == error(errcode.SiteNotAllowed) }

// shorten cuts s to at most n characters for a message (see
// display.Shorten).
func shorten(s string, n int) string { return display.Shorten(s, n) }
