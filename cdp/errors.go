package cdp

import (
	"errors"
	"fmt"
	"strings"
	"time"

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

// ErrLaunch matches every error of [Launch] and [Launcher.Launch]: a
// browser or app that could not be started or did not publish its DevTools
// endpoint in time.
var ErrLaunch = errors.New("cdp: launch failed")

// Failure categories of the launcher, [Tab.QA] and probes. Each error the
// launcher returns matches exactly one of them with errors.Is; the typed
// errors below carry the details.
var (
	// ErrValidation reports a request that cannot be carried out as given:
	// a missing or doubled target, a flag the launcher owns, a target that
	// is not an Electron app, an unknown launch ID.
	ErrValidation = errors.New("cdp: invalid request")
	// ErrPolicyBlocked reports a target refused by the caller's Allow or
	// Deny list; a *PolicyError names the list and entry.
	ErrPolicyBlocked = errors.New("cdp: blocked by policy")
	// ErrTimeout reports a bounded wait that ran out: a browser that did
	// not publish its endpoint in time, or a condition that did not hold.
	ErrTimeout = errors.New("cdp: timed out")
	// ErrUpstream reports a failure of the browser or app itself: it could
	// not be started, exited early, or refused the connection.
	ErrUpstream = errors.New("cdp: browser failure")
	// ErrTabDrift reports a launch whose process or debugging port is gone
	// although it was never cleaned up.
	ErrTabDrift = errors.New("cdp: launch is no longer live")
	// ErrCleanupFailed reports a cleanup with a step that failed; a
	// *CleanupError lists the steps. Retrying with the same ID is safe.
	ErrCleanupFailed = errors.New("cdp: cleanup incomplete")
)

// Is lets a wait that ran out match ErrTimeout as well as the context error.
func (e *WaitTimeoutError) Is(target error) bool { return target == ErrTimeout }

// LaunchError is a failed launch. It matches ErrLaunch and its Kind
// (ErrValidation, ErrTimeout or ErrUpstream).
type LaunchError struct {
	Kind error
	Msg  string
	// Err is the underlying cause, if any.
	Err error
	// Diagnostics describe the process when it was started; nil when the
	// launch failed before that.
	Diagnostics *LaunchDiagnostics
}

// LaunchDiagnostics describe a process that did not become ready.
type LaunchDiagnostics struct {
	Executable string
	PID        int
	// PIDAlive tells whether the process was still running when the launch
	// gave up. The launcher then ends it, so it is never left running.
	PIDAlive bool
	// Exit is how the process ended, when it did so on its own.
	Exit            string
	ProfileDir      string
	PortFile        string
	PortFilePresent bool
	Elapsed         time.Duration
	Timeout         time.Duration
	// Stderr holds the last lines the process wrote to stderr.
	Stderr []string
}

func (e *LaunchError) Error() string {
	s := "cdp: launch: " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if d := e.Diagnostics; d != nil {
		s += fmt.Sprintf(" (pid %d alive=%t, port file present=%t, elapsed %s of %s",
			d.PID, d.PIDAlive, d.PortFilePresent, d.Elapsed.Round(time.Millisecond), d.Timeout)
		if d.Exit != "" {
			s += ", " + d.Exit
		}
		if len(d.Stderr) > 0 {
			s += ", stderr: " + strings.Join(d.Stderr, " | ")
		}
		s += ")"
	}
	return s
}

func (e *LaunchError) Unwrap() []error {
	errs := []error{ErrLaunch, e.Kind}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// PolicyError names the policy entry that refused a launch. It matches
// ErrPolicyBlocked and ErrLaunch.
type PolicyError struct {
	// List is "deny" or "allow".
	List string
	// Entry is the deny entry that matched; empty for an allow list that
	// nothing matched.
	Entry string
	// Field and Value say what the entry matched (name, id, app path or
	// executable path).
	Field, Value string
}

func (e *PolicyError) Error() string {
	if e.Entry == "" {
		return "cdp: launch: blocked by policy: matches no allow entry"
	}
	return fmt.Sprintf("cdp: launch: blocked by policy: %s entry %q matches %s %q", e.List, e.Entry, e.Field, e.Value)
}

func (e *PolicyError) Unwrap() []error { return []error{ErrLaunch, ErrPolicyBlocked} }

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
}

func (e *SiteError) Error() string {
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
