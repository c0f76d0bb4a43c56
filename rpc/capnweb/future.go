package capnweb

import (
	"context"
	"sync"
)

// future is a value that settles once: a call's result, a push result, or
// a promise the peer will resolve. Whoever owns the future owns the value
// tree it settles with.
type future struct {
	mu      sync.Mutex
	done    chan struct{}
	settled bool
	val     any
	err     error
	cbs     []func()
	// lastCall is closed when the most recent call pipelined on this
	// future (while it was pending) has returned; guarded by Session.mu.
	lastCall chan struct{}
}

func newFuture() *future { return &future{done: make(chan struct{})} }

func settledFuture(v any, err error) *future {
	f := &future{done: make(chan struct{}), settled: true, val: v, err: err}
	close(f.done)
	return f
}

// settle records the outcome and runs the callbacks. Later calls are
// ignored and report false.
func (f *future) settle(v any, err error) bool {
	f.mu.Lock()
	if f.settled {
		f.mu.Unlock()
		return false
	}
	f.settled, f.val, f.err = true, v, err
	cbs := f.cbs
	f.cbs = nil
	close(f.done)
	f.mu.Unlock()
	for _, cb := range cbs {
		cb()
	}
	return true
}

// onDone runs cb once the future settles (now, if it already has).
func (f *future) onDone(cb func()) {
	f.mu.Lock()
	if !f.settled {
		f.cbs = append(f.cbs, cb)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	cb()
}

// wait blocks until the future settles or ctx ends. The value is borrowed.
func (f *future) wait(ctx context.Context) (any, error) {
	select {
	case <-f.done:
	default:
		// A method waiting on the peer gives its object's turn up, even
		// with a ctx whose Done does not reach its own (context.WithoutCancel).
		Yield(ctx)
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return f.val, f.err
}

func (f *future) isSettled() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}
