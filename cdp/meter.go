package cdp

import "github.com/tranquil/automation/errcode"

// Meter counts the host memory a tab's page calls hold on behalf of
// whoever drives the tab (a run's budget, in package runner). A reply to a
// page call that is larger than Left is read past and dropped before it is
// built, and the call fails with ErrOverBudget; a reply that fits is taken
// from the meter while it is decoded. Implementations must be safe for
// concurrent use.
type Meter interface {
	// Left is the most the next reply may take.
	Left() int64
	// Take charges n bytes, which what names; an error refuses them and
	// charges nothing.
	Take(n int64, what string) error
	// Give returns n bytes taken with Take.
	Give(n int64)
}

// replyLimit is the most a reply to one of t's page calls may be: what its
// meter has left, or 0 for the connection's own limit.
func (t *Tab) replyLimit() int64 {
	if t.opts.Meter == nil {
		return 0
	}
	return max(t.opts.Meter.Left(), 1)
}

// takeReply charges a reply of n bytes to t's meter for as long as it is
// decoded; give returns it.
func (t *Tab) takeReply(n int) (give func(), err error) {
	m := t.opts.Meter
	if m == nil {
		return func() {}, nil
	}
	if err := m.Take(int64(n), "a reply from the page"); err != nil {
		return nil, codeErr(errcode.LimitExceeded, "%w: %w", ErrOverBudget, err)
	}
	return func() { m.Give(int64(n)) }, nil
}

// overBudget is the error of a reply read past for being larger than t's
// meter had left. The meter is told, by a Take of the reply's size that
// cannot fit (or is given straight back if memory was freed meanwhile:
// the reply is gone either way), so that it sees every refusal.
func (t *Tab) overBudget(o *oversizeError) error {
	if err := t.opts.Meter.Take(o.Size, "a reply from the page"); err == nil {
		t.opts.Meter.Give(o.Size)
	}
	return codeErr(errcode.LimitExceeded, "%w", o)
}
