package cdp

import (
	"context"
	"time"
)

// Pacer spaces the repeated checks of a tab's waiting calls (waits,
// expectations, readers and actions waiting for their target): each check
// after a call's first takes a turn from it. Given to every tab of one
// owner, it caps what all of that owner's pending waits make the host and
// the browser do together, however many there are.
type Pacer interface {
	// Turn returns when the next check may run, or ctx's error.
	Turn(ctx context.Context) error
}

// pause waits out step i of backoff, then the tab's turn (see
// [TabOptions.Pacer]). It returns ctx's error when ctx ends first, and
// the tab's when its session ends.
func (t *Tab) pause(ctx context.Context, backoff []time.Duration, i int) error {
	if d := backoff[min(i, len(backoff)-1)]; d > 0 {
		tm := time.NewTimer(d)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-t.route.gone:
			tm.Stop()
			return t.route.err
		}
	}
	if t.opts.Pacer != nil {
		return t.opts.Pacer.Turn(ctx)
	}
	return ctx.Err()
}
