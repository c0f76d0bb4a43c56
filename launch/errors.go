package launch

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
)

// ErrLaunch matches every error of [Chromium] and [Launcher.Launch]: a
// browser or app that could not be started or did not answer in time.
var ErrLaunch = errors.New("launch: failed")

// Failure categories of the package. Each error [Chromium] or a
// [Launcher] returns matches exactly one of them with errors.Is, and so do
// [QA]'s bad options; the typed errors ([*Error], [*PolicyError],
// [*CleanupError]) carry the details.
var (
	// ErrValidation reports a request that cannot be carried out as given:
	// a missing or doubled target, a flag the launcher owns, a target that
	// is not an Electron app, an unknown launch ID, QA options without a
	// check.
	ErrValidation = errors.New("launch: invalid request")
	// ErrPolicyBlocked reports a target refused by the caller's Allow or
	// Deny list; a *PolicyError names the list and entry.
	ErrPolicyBlocked = errors.New("launch: blocked by policy")
	// ErrTimeout reports a bounded wait that ran out: a browser that did
	// not answer or publish its endpoint in time. It is [cdp.ErrTimeout]
	// itself, which a condition that did not hold on a page matches too,
	// so [github.com/tranquil/automation/errcode.Of] gives a launch's timeout the code it gives a page's.
	ErrTimeout = cdp.ErrTimeout
	// ErrUpstream reports a failure of the browser or app itself: it could
	// not be started, exited early, or refused the connection.
	ErrUpstream = errors.New("launch: browser failure")
	// ErrTabDrift reports a launch whose process or debugging port is gone
	// although it was never cleaned up.
	ErrTabDrift = errors.New("launch: no longer live")
	// ErrCleanupFailed reports a cleanup with a step that failed; a
	// *CleanupError lists the steps. Retrying with the same ID is safe.
	ErrCleanupFailed = errors.New("launch: cleanup incomplete")
)

// Error is a failed launch. It matches ErrLaunch and its Kind
// (ErrValidation, ErrTimeout or ErrUpstream).
type Error struct {
	Kind error
	Msg  string
	// Err is the underlying cause, if any.
	Err error
	// Diagnostics describe the process when it was started; nil when the
	// launch failed before that.
	Diagnostics *Diagnostics
}

// Diagnostics describe a process that did not become ready.
type Diagnostics struct {
	Executable string
	PID        int
	// PIDAlive tells whether the process was still running when the launch
	// gave up. The launch then ends it, so it is never left running.
	PIDAlive bool
	// Exit is how the process ended, when it did so on its own.
	Exit       string
	ProfileDir string
	// PortFile is the DevToolsActivePort file a launch with a debugging
	// port waits for; empty for a launch over the pipe.
	PortFile        string
	PortFilePresent bool
	Elapsed         time.Duration
	Timeout         time.Duration
	// Stderr holds the last lines the process wrote to stderr.
	Stderr []string
}

func (e *Error) Error() string {
	s := "launch: " + e.Msg
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

func (e *Error) Unwrap() []error {
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
		return "launch: blocked by policy: matches no allow entry"
	}
	return fmt.Sprintf("launch: blocked by policy: %s entry %q matches %s %q", e.List, e.Entry, e.Field, e.Value)
}

func (e *PolicyError) Unwrap() []error { return []error{ErrLaunch, ErrPolicyBlocked} }
