package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/trace"
)

// A run's trace (package trace): its tab calls, navigations, console
// lines, dialogs and steps, and what a tab showed when a call failed. It
// is kept with the run's history entry (history.Store.PutTrace) when the
// run ends; Manager.Trace reads it back.

// newTrace is a run's recorder; nil when the manager traces nothing.
func newTrace(m *Manager, id string) *trace.Recorder {
	if m.cfg.NoTrace {
		return nil
	}
	return trace.NewRecorder(id, trace.Limits{})
}

// evidenceTimeout bounds the capture after a failed call, which holds the
// call's answer: a screenshot and an outline take tens of milliseconds on
// a working page, and a page too busy to give them must not keep a call
// much past its own timeout.
const evidenceTimeout = time.Second

// traced records a call on tab id in the run's trace and returns err, its
// outcome. tg is the call's target, nil for none. A failed call that the
// page could explain gets the tab's evidence, while the call still holds
// the run's gate.
func (r *Run) traced(c tabCall, api, id string, tg *cdp.Locator, start time.Time, err error) error {
	rec := r.trace
	if rec == nil {
		return err
	}
	call := trace.Call{Method: api, Tab: id, Page: c.tab.Address(), Start: start, Duration: time.Since(start)}
	if tg != nil {
		call.Target = tg.String()
	}
	if err == nil {
		rec.Call(call)
		return nil
	}
	code := errCodeOf(err)
	call.Code, call.Error = string(code), callMessage(code, err)
	seq := rec.Call(call)
	switch code {
	case errcode.Invalid, errcode.NotGranted, errcode.NavigationBlocked:
		return err // the page has nothing to say about these
	}
	if rec.WantFailure() && c.tab.Err() == nil {
		r.captureFailure(c.tab, seq)
	}
	return err
}

// callMessage is what the script was told, without the error's name. A
// failed expectation's message quotes the text expected and the text
// seen, which for a field is what was typed: the trace keeps neither.
func callMessage(code errcode.Code, err error) string {
	if code == errcode.ExpectationFailed {
		return "the expectation did not hold (what was expected and seen is not kept)"
	}
	var ce *capnweb.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// captureFailure records what tab shows as the evidence of call seq.
func (r *Run) captureFailure(tab *cdp.Tab, seq int) {
	ctx, cancel := context.WithTimeout(r.gate.ctx, evidenceTimeout)
	defer cancel()
	ev, err := tab.Evidence(ctx, cdp.EvidenceOptions{})
	f := trace.Failure{Seq: seq, Outline: ev.Outline}
	if ev.JPEG != nil {
		f.Image, f.ImageType = ev.JPEG, trace.JPEG
	}
	if err != nil {
		f.Note = fmt.Sprintf("not all of the page could be captured: %s", errcode.Of(err))
	}
	r.trace.Failure(f)
}

// traceTab adds the trace's hooks to the options of tab id's session:
// its navigations, besides the action log.
func (r *Run) traceTab(id string, o cdp.TabOptions) cdp.TabOptions {
	rec, log := r.trace, o.Log
	if rec == nil {
		return o
	}
	o.Log = func(a cdp.Action) {
		log(a)
		kind := a.Method
		switch {
		case a.Method != "goto" && a.Method != "navigated" && a.Method != "navigate":
			return
		case a.Outcome == "refused" || a.Outcome == string(errcode.NavigationBlocked) || a.Method == "navigate":
			kind = "refused"
		}
		rec.Navigation(trace.Navigation{At: time.Now(), Tab: id, Kind: kind, URL: a.Target})
	}
	return o
}

// traceAttached follows the console and the dialogs of tab id, just
// attached as t, and returns the dialog handler to install: h, recording
// each dialog's type, the start of its message and whether it was
// accepted, never a prompt's answer. The subscriptions end with t's
// session.
func (r *Run) traceAttached(id string, t *cdp.Tab, h cdp.DialogHandler) cdp.DialogHandler {
	rec := r.trace
	if rec == nil {
		return h
	}
	t.OnConsole(func(m cdp.ConsoleMessage) {
		rec.Console(trace.ConsoleLine{At: time.Now(), Tab: id, Level: m.Type, Text: m.Text})
	})
	t.OnPageError(func(e *cdp.EvalError) {
		rec.Console(trace.ConsoleLine{At: time.Now(), Tab: id, Level: "pageerror", Text: e.Error()})
	})
	return func(d cdp.Dialog) cdp.DialogAnswer {
		a := h(d)
		rec.Dialog(trace.Dialog{At: time.Now(), Tab: id, Type: d.Type, Message: d.Message, Accepted: a.Accept})
		return a
	}
}

// traceEvent records the run's steps and progress reports.
func (r *Run) traceEvent(e Event) {
	rec := r.trace
	if rec == nil {
		return
	}
	switch {
	case e.Kind == EventStep && e.Step != nil:
		s := e.Step
		rec.Step(trace.Step{At: e.Time, Kind: s.Kind, Name: s.Name, Phase: s.Phase, Attempt: s.Attempt, OK: s.OK, Error: s.Error, Fraction: -1})
	case e.Kind == EventProgress:
		rec.Step(trace.Step{At: e.Time, Kind: "progress", Name: e.Line, Fraction: e.Fraction})
	}
}

// storeTrace keeps the run's trace with its history entry. A run that
// recorded nothing keeps none. Failures are the host's to know, not the
// script's: the run's outcome does not depend on its trace.
func (r *Run) storeTrace() {
	if r.trace == nil {
		return
	}
	t := r.trace.Trace()
	if len(t.Calls)+len(t.Navigations)+len(t.Console)+len(t.Dialogs)+len(t.Steps)+len(t.Accesses) == 0 {
		return
	}
	data, err := trace.Encode(t)
	if err == nil {
		err = r.m.hist.PutTrace(r.id, data)
	}
	if err != nil {
		r.m.log.Warn("runner: storing a run's trace", "run", r.id, "error", err)
	}
}

// Trace returns the trace kept for run id: errors wrap history.ErrNoRun
// or history.ErrNoTrace when there is none, history.ErrCorrupt or
// trace.ErrCorrupt when it cannot be read.
func (m *Manager) Trace(id string) (*trace.Trace, error) {
	data, err := m.hist.Trace(id)
	if err != nil {
		return nil, err
	}
	return trace.Decode(data)
}
