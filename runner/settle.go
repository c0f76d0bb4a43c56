package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/runner/internal/proc"
)

// settle ends a run whose process has exited and whose output is drained.
// Process death revokes everything: the session and token, then the tabs
// the run opened. Then the output and exit go into the entry, the outcome
// becomes the run's final state, a succeeded run's outputs are mirrored,
// and the run is reported done (finish). expired is the timeout's reason
// when the run timed out.
func (r *Run) settle(c *proc.Child, out *output, h *permissions.Header, expired string) {
	m := r.m
	r.noteSessionLimit() // before the revocation ends the session for its own reason
	m.bridge.Revoke(r.id)
	// Calls the session had queued still run after the revocation; the
	// closed gate keeps them from the host.
	r.closeGate()
	r.releaseTabs()

	code, sig := c.Exit()
	r.mu.Lock()
	r.entry.Output, r.entry.OutputTruncated = out.kept.String(), out.kept.Truncated()
	r.entry.FirstError = out.errs.String()
	r.entry.Warnings = out.errs.warningLines()
	if r.cancelOn && expired == "" {
		// The script's last words on cancellation are the reason itself,
		// or a stack the reason explains better.
		r.entry.FirstError = r.cancelReasonLocked()
	}
	if code >= 0 {
		r.entry.ExitCode = &code
	}
	r.entry.Signal = sig
	cancelled := r.cancelOn
	overLimit := r.overLimitWhy
	if overLimit != "" {
		r.entry.FirstError = overLimit
	}
	r.mu.Unlock()

	switch {
	case overLimit != "":
		r.finish(history.StateFailed, overLimit)
		r.notifyFailure(overLimit)
	case expired != "":
		r.finish(history.StateTimedOut, expired)
		r.notifyFailure(expired)
	case cancelled:
		r.finish(history.StateCancelled, r.cancelReason())
	case code == 0:
		r.mirrorOutputs(h) // its failure stays in the mirror's state
		r.finish(history.StateSucceeded, "")
	case code == exitDenied && !out.errs.endedItself(code): // a script's own 3 is its failure
		r.finish(history.StateRefused, firstNonEmpty(out.errs.raw(), "the SDK could not provide a capability this script needs"))
	default:
		reason := firstNonEmpty(r.entryFirstError(), describeExit(code, sig))
		if oom := out.errs.outOfMemory(); oom != "" {
			reason = m.oomReason(oom)
		}
		r.finish(history.StateFailed, reason)
		r.notifyFailure(reason)
	}
}

// sessionEndWait bounds settle's wait for the session of a run whose
// process has exited: its connection is closed, so the bridge reads that
// and ends the session at once; the bound is for a connection something
// else still holds.
const sessionEndWait = 2 * time.Second

// noteSessionLimit makes a session that ended past one of its limits the
// run's reason, once the session has ended. watchBudget does the same as
// the session ends, but on a goroutine of its own, and attach starts it
// only when the bridge reports the session, from the connection's
// goroutine, while the session already serves: a script told its session
// was aborted may exit, and its run reach settle, before either has run,
// and its end would then read as the script's own failure ("the host
// closed the connection", a reset connection). It revokes the run's
// token and sessions, as settle does next.
func (r *Run) noteSessionLimit() {
	t := time.NewTimer(sessionEndWait)
	defer t.Stop()
	s := r.awaitSession(t.C)
	if s == nil {
		return
	}
	select {
	case <-s.Done():
	case <-t.C:
		return
	}
	if err := s.Err(); errors.Is(err, capnweb.ErrLimit) {
		r.noteOverLimit(limitReason(resourceMemory, limitWords(err)))
	}
}

// awaitSession returns the run's session, waiting until deadline for the
// bridge to report one it holds for the run; nil when it holds none.
func (r *Run) awaitSession(deadline <-chan time.Time) *capnweb.Session {
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	for {
		r.mu.Lock()
		s := r.sess
		r.mu.Unlock()
		// A session the bridge still holds (its handshake, or its start
		// before the report) is reported, or dropped, in a moment.
		if s != nil || r.m.bridge.Revoke(r.id) == 0 {
			return s
		}
		select {
		case <-r.ready:
		case <-poll.C:
		case <-deadline:
			return nil
		}
	}
}

func (r *Run) entryFirstError() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.entry.FirstError
}

func (r *Run) setState(s history.State, reason string) {
	r.mu.Lock()
	r.state, r.reason = s, reason
	r.entry.State, r.entry.Reason = s, reason
	e := r.entry
	r.mu.Unlock()
	r.m.record(r, e)
	r.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventState, State: s, Line: reason})
}

// finish writes the final entry and closes done.
func (r *Run) finish(s history.State, reason string) {
	for _, f := range r.cleanups {
		f()
	}
	r.closeGate() // before the end event, which is the run's last
	r.storeTrace()
	r.mu.Lock()
	r.entry.End = time.Now().UTC()
	// The run's own time: a person reading the consent prompt is not it.
	r.entry.Duration = r.entry.End.Sub(r.entry.Start) - r.consentWait
	r.entry.Result = r.result
	for _, p := range r.panes {
		p.Release()
	}
	clear(r.panes)
	r.mu.Unlock()
	r.setState(s, reason)
	r.m.forget(r.id)
	close(r.done)
}

// fail ends a run the host could not carry out (its deno is unusable, the
// SDK could not be laid down), and tells the host.
func (r *Run) fail(reason string) {
	r.mu.Lock()
	r.entry.FirstError = reason
	r.mu.Unlock()
	r.finish(history.StateFailed, reason)
	r.notifyFailure(reason)
}

// refuse ends a run that never started a process.
func (r *Run) refuse(reason string) {
	r.mu.Lock()
	r.entry.FirstError = reason
	r.mu.Unlock()
	r.finish(history.StateRefused, reason)
}

// describeExit words how a process ended that neither the script nor the
// runner explained: a signal the runner did not send came from outside
// the app (a user's kill, the OOM killer, a shutdown).
func describeExit(code int, sig string) string {
	if sig != "" {
		if name, ok := signalNames[sig]; ok {
			sig = name
		}
		return fmt.Sprintf("the process was stopped from outside the app (signal %s)", sig)
	}
	return fmt.Sprintf("exited with code %d", code)
}

// signalNames gives the usual names of the signals Go describes in words.
var signalNames = map[string]string{
	"killed": "SIGKILL", "terminated": "SIGTERM", "interrupt": "SIGINT", "hangup": "SIGHUP",
	"aborted": "SIGABRT", "segmentation fault": "SIGSEGV", "quit": "SIGQUIT",
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
