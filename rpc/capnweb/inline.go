package capnweb

import (
	"context"
	"time"
)

// Calls the reader runs itself.
//
// Handing a call to another goroutine costs more than most calls: the
// runtime wakes a second thread, often on the other core, and the reply
// then leaves from there. So a call to a method of a Go object that has
// been quick in this session, with arguments that are all here, is run by
// the reader once the frame that made it has been handled, and its reply
// is written on the spot. Should such a call run longer than inlineBudget
// (it blocks, or waits for something only a later frame brings), a new
// reader takes over at once and the method is run on worker goroutines
// from then on in this session; the old reader finishes its call and
// ends. So reading never waits behind a call for longer than about
// inlineBudget, and a call that needs the peer cannot deadlock the
// session. (Calls on the same object still start in order: see turns.go.)

// inlineBudget is how long a call may hold up the reader.
const inlineBudget = time.Millisecond

// pendingCall is a call left for the reader.
type pendingCall struct {
	m  *method
	fn func(ctx context.Context)
}

// start runs fn for a call: on a worker goroutine, or, when quick names a
// method and the caller is the reader, left for the reader to run after
// the current frame. It reports false when the call cannot start because
// the session has ended or, having aborted it, MaxQueued is exceeded.
func (s *Session) start(quick *method, fn func(ctx context.Context)) bool {
	if quick == nil {
		return s.spawn(fn)
	}
	now, ok := s.admit(fn)
	if !ok || !now {
		return ok
	}
	s.pending = append(s.pending, pendingCall{m: quick, fn: fn})
	return true
}

// quickMethod returns the method a call of path on target would run, when
// the reader may run it: target is a Go object with that method, the
// method has not overrun inlineBudget in this session, and the arguments
// hold neither results still to come nor stubs (a method given a callback
// is likely to call it and wait for the peer).
func (s *Session) quickMethod(target any, path []string, args []any) *method {
	if len(path) != 1 {
		return nil
	}
	o, ok := target.(*localObj)
	if !ok || o.methods == nil {
		return nil
	}
	m := o.methods[path[0]]
	if m == nil || !plainArgs(args, 0) {
		return nil
	}
	if _, slow := s.slow.Load(m); slow {
		return nil
	}
	return m
}

// plainArgs reports whether v holds only data: no placeholders, stubs or
// objects passed by reference.
func plainArgs(v any, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if !plainArgs(e, depth+1) {
				return false
			}
		}
		return true
	case *Object:
		for _, e := range x.vals {
			if !plainArgs(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plainArgs(e, depth+1) {
				return false
			}
		}
		return true
	case *future, *pipeRef, *Stub, *localObj, *RemoteError:
		return false
	}
	return true // plain values: numbers, strings, bigint, date, bytes and the like
}

// runPending runs the calls the last frame left for the reader. It reports
// false when a call overran and a new reader took over: this goroutine
// then hands the rest to workers and must stop reading.
func (s *Session) runPending(ctx context.Context, gen uint64) bool {
	batch := s.pending
	s.pending = nil
	for i, c := range batch {
		s.readerMu.Lock()
		s.inlineMethod, s.inlineSince = c.m, time.Now()
		if !s.handoffArmed {
			// Armed once per busy spell, not per call: setting a timer can
			// wake another thread, which is what running here avoids.
			s.handoffArmed = true
			s.handoff.Reset(inlineBudget)
		}
		s.readerMu.Unlock()
		c.fn(ctx)
		if next := s.done1(); next != nil {
			// A call queued behind MaxInFlight takes the slot, on a worker:
			// it may block, which the reader must not.
			if !s.launch(next) {
				next(s.ctx)
			}
		}
		s.readerMu.Lock()
		s.inlineMethod = nil
		demoted := s.readerGen != gen
		s.readerMu.Unlock()
		if demoted {
			for _, rest := range batch[i+1:] {
				if !s.launch(rest.fn) { // admitted already
					rest.fn(s.ctx) // the session ended: the call fails at once
				}
			}
			return false
		}
	}
	return true
}

// overran runs when the handoff timer fires: if the reader is still in an
// inline call that started at least inlineBudget ago, a new reader takes
// over and the method is marked slow for this session.
func (s *Session) overran() {
	s.readerMu.Lock()
	m := s.inlineMethod
	if m == nil {
		s.handoffArmed = false // idle: the next inline call arms it again
		s.readerMu.Unlock()
		return
	}
	if left := inlineBudget - time.Since(s.inlineSince); left > 0 {
		s.handoff.Reset(left) // another call than the one it was armed for
		s.readerMu.Unlock()
		return
	}
	s.handoffArmed = false
	s.inlineMethod = nil
	s.readerGen++
	gen := s.readerGen
	s.readerMu.Unlock()
	s.slow.Store(m, struct{}{})

	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go s.readLoop(gen)
}
