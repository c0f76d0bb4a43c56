package runner

import (
	"context"

	"github.com/tranquil/automation/cdp"
)

// The interceptor: every host call a script makes passes invoke, which
// does what the method's row (methods.go) says around the method's own
// body, in one order: the trace's record opens; the host interface the
// method needs, then the method's own argument checks, may refuse it; it
// passes the run's gate; the host's wait starts; its tab is attached; the
// call's own timeout starts; for a page action the page is shot before;
// then the body runs, its error is worded, and the record closes, with
// the page's evidence of a failure. The record closes inside the gate, so
// a run's stored trace holds every call its gate let in.

// callReq is what invoke needs of a call besides its row.
type callReq struct {
	// tab is the tab the call is on, "" for none: the trace's, and the
	// one attached when the row says so.
	tab string
	// timeout is the call's own timeout in milliseconds, for a row that
	// waits waitCall; 0 is the host's default.
	timeout float64
	// target is what the call acts on, recorded even when it is
	// refused; a body names a target it knows only once let in (aim).
	target *cdp.Locator
	// refused is what the method's own checks of its arguments found,
	// nil when they passed: the call is refused with it before the gate.
	refused error
}

// call is a host call inside the interceptor, as its body sees it.
type call struct {
	r *Run
	// ctx is the call's context: inside the gate, bounded by its wait.
	ctx context.Context
	// rt and tab are the call's tab, attached; nil for a row without.
	rt  *runTab
	tab *cdp.Tab
	// before is the page before a page action, for the trace (see
	// Config.TraceActionScreenshots); nil when not taken.
	before []byte
	rec    hostCall // the trace's record of the call
}

// invoke runs body as r's host call of row id, as the row says (see
// above). body runs only once the call passed everything before it; the
// zero T is returned with any refusal.
func invoke[T any](ctx context.Context, r *Run, id methodID, q callReq, body func(*call) (T, error)) (T, error) {
	var zero T
	m := &methods[id]
	c := call{r: r, ctx: ctx, rec: hostCall{done: true}}
	if !m.untraced {
		c.rec = r.call(ctx, m.api, q.tab)
		c.rec.target = q.target
	} else {
		// Any call may carry the sites of earlier ones (the SDK sends
		// them in batches), a call the trace does not record too.
		r.lateSites(ctx)
	}
	if err := r.hostHas(m.host); err != nil {
		return zero, c.end(err)
	}
	if q.refused == nil {
		q.refused = checkTimeout(m.api, q.timeout)
	}
	if q.refused != nil {
		return zero, c.end(q.refused)
	}
	switch m.gate {
	case gated, gateDrop:
		ch := m.rate
		if m.gate == gateDrop {
			if !r.admit(m.rate) {
				return zero, c.end(nil) // a display: the host hears how many were dropped
			}
			ch = "" // its token is taken
		}
		ctx, leave, err := r.enter(ctx, ch)
		if err != nil {
			return zero, c.end(err)
		}
		defer leave()
		c.ctx = ctx
	case gateReport:
		if m.rate != "" && !r.admit(m.rate) {
			return zero, nil
		}
	}
	if m.wait == waitHost {
		var cancel context.CancelFunc
		c.ctx, cancel = boundWait(c.ctx)
		defer cancel()
	}
	if m.tab {
		rt, t, err := r.tab(c.ctx, q.tab)
		if err != nil {
			return zero, c.end(err)
		}
		c.rt, c.tab, c.rec.on = rt, t, t
	}
	if m.wait == waitCall {
		var cancel context.CancelFunc
		c.ctx, cancel = withTimeout(c.ctx, q.timeout)
		defer cancel()
	}
	if m.page == pageAction {
		c.before = r.shotBefore(c.tab)
	}
	v, err := body(&c)
	switch m.errs {
	case errsHost:
		err = hostAnswer(c.ctx, m.api, err)
	case errsBrowser:
		err = browserErr(err)
	case errsHostBrowser:
		err = browserErr(hostAnswer(c.ctx, m.api, err))
	}
	if m.page != pageNone {
		return v, c.rec.traced(m.page, &c, err)
	}
	return v, c.end(err)
}

// end records the call with its outcome err, unless it was recorded
// already, and returns err.
func (c *call) end(err error) error {
	c.rec.end(&err)
	return err
}

// aim records target as what the call acts on.
func (c *call) aim(target *cdp.Locator) { c.rec.target = target }

// recordedElsewhere leaves the call out of the trace: another call
// records it.
func (c *call) recordedElsewhere() { c.rec.done = true }

// hostHas refuses a call needing part of the host the host lacks.
func (r *Run) hostHas(part hostPart) error {
	if part == hostNone {
		return nil
	}
	h := &r.m.cfg.Host
	switch {
	case part == hostUI && h.UI == nil:
		return noHost("ui")
	case part == hostClipboard && h.Clipboard == nil:
		return noHost("clipboard")
	case part == hostWorkspace && h.Workspace == nil:
		return noHost("workspace")
	case part == hostTabs && h.Tabs == nil:
		return noHost("tabs")
	}
	return nil
}
