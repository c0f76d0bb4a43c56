package capnweb

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Where calls run: the concurrency contract of a session.
//
// Goroutines, and what each runs:
//
//  1. One reader at a time (readLoop) calls Transport.Recv and handles each
//     frame whole, in arrival order, before it reads the next: it
//     evaluates the frame, updates the import and export tables
//     (tables.go) and queues the frames that answer it. Handling a frame
//     starts calls but runs none; the only code of the user's it may run
//     is a Dispose (see 8).
//  2. After each frame the reader runs the calls the frame left for it
//     (start, quickMethod): a method of a Go object, with a settled target
//     and plain-data arguments, whose turn on its object is free, that
//     has not overrun inlineBudget in this session and that fits under
//     MaxInFlight at once. That spares waking a second thread per call.
//     When such a call runs longer than inlineBudget (1 ms), the handoff
//     timer starts a new reader (overran) and marks the method slow for
//     the session; the old reader finishes its call, hands the rest of its
//     calls to workers and ends. So reading waits behind a call for about
//     inlineBudget at most, and a call that needs a later frame cannot
//     deadlock the session.
//  3. Every other call runs on a worker goroutine (spawn, launch, worker),
//     and so does waiting for the results still missing from a value the
//     peer sent (futureOf, handleResolve). Up to maxIdleWorkers workers
//     stay parked between calls, with stacks already grown.
//  4. One writer goroutine (writeLoop, write.go) sends queued frames. A
//     goroutine that queues frames writes them itself when nobody else is
//     writing (flush), and only one goroutine writes at a time. A caller or
//     a worker may block on the transport doing so; the reader writes only
//     through [NoWaitSender] and leaves what the transport would wait for
//     to the writer, since a reader blocked on a full socket, facing a peer
//     blocked the same way, would stop both sides.
//  5. Callers' goroutines (the methods of [Stub]) queue frames and wait for
//     results; they never run the peer's calls.
//
// Who may block:
//
//  6. A method may block: on a channel, a timer, the network, a lock, a
//     call to the peer. A call runs alone on its object until it returns
//     or is seen blocked (parked by the Go scheduler, as a dump of the
//     goroutines shows, goroutineBlocked; on a lock, twice in a row): then
//     the next call on the object starts while the blocked one goes on,
//     as after an await in JavaScript. The call behind looks after
//     yieldCheck, then at doubling intervals up to yieldCheckMax. A method
//     once seen blocked lets the next call start as soon as it starts, for
//     the rest of the session (yielded, begin). A method that computes for
//     long holds its object's later calls back, as it would in JavaScript.
//  7. s.mu, which guards the tables and the queue of frames, is never held
//     while a method runs or while the transport sends or receives.
//  8. Dispose runs on whichever goroutine of the session drops the last
//     reference (the reader, for a release frame), so it must not block
//     for long. A method must not Close its own session, which waits for
//     the method; Abort does not wait.
//
// What order is kept:
//
//  9. Frames are handled in arrival order, and leave in the order they
//     were queued.
// 10. Calls to one object start in arrival order (turnQ). Calls pipelined
//     on a result still to come start in arrival order once it has
//     settled (startCall). A call whose arguments hold results still to
//     come takes its turn once they have arrived, so later calls may pass
//     it.
// 11. Results go back in completion order. Calls on different objects run
//     concurrently, so objects shared between sessions, and methods that
//     block, must be safe for concurrent use.
//
// Bounds:
//
// 12. Every call of the peer's counts against Options.MaxInFlight while it
//     runs, inline or on a worker, and so does every wait for a value's
//     missing results (admit). Beyond it calls queue in arrival order; a
//     finishing call hands its slot to the first one queued, on its own
//     goroutine (run), except on the reader, which hands it to a worker
//     since it may block (runPending). So at most MaxInFlight goroutines
//     run calls at once, blocked ones included.
// 13. More than Options.MaxQueued calls queued aborts the session with
//     ErrLimit: that bounds the memory a peer that never stops calling can
//     take.
// 14. What the calls hold, their arguments, the copies their references
//     need and the results the peer has not released, counts against
//     Options.MaxMemory (budget.go); past it the session aborts with
//     ErrLimit, on whichever goroutine asked for more.
// 15. When the session ends every call's context is cancelled, queued
//     calls fail at once, and Close returns only once every goroutine
//     above has returned.

// inlineBudget is how long a call may hold up the reader.
const inlineBudget = time.Millisecond

// yieldCheck is how long a call may hold its object's turn before the
// call behind it looks whether it is blocked, and yieldCheckMax the
// longest wait between looks.
const (
	yieldCheck    = inlineBudget
	yieldCheckMax = 16 * time.Millisecond
)

// maxIdleWorkers bounds the goroutines a session keeps parked for its next
// calls.
const maxIdleWorkers = 16

// readLoop reads and handles frames until the session ends, or until a
// new reader (generation gen+1) took over while this one ran a call.
func (s *Session) readLoop(gen uint64) {
	defer s.wg.Done()
	ctx := withGoroutine(s.ctx) // for the calls this reader runs itself
	for {
		msg, err := s.t.Recv(s.ioCtx)
		if err != nil {
			if errors.Is(err, ErrLimit) || errors.Is(err, ErrProtocol) {
				s.end(&AbortError{Cause: err}, err, true)
			} else {
				s.end(&AbortError{Remote: true, Cause: err}, nil, false)
			}
			return
		}
		if len(msg) > s.opts.maxMessage() {
			err := limitErrorf("message of %d bytes exceeds the limit of %d", len(msg), s.opts.maxMessage())
			s.end(&AbortError{Cause: err}, err, true)
			return
		}
		s.inReader.Store(true)
		err = s.handle(msg)
		if err != nil {
			s.flush()
			s.inReader.Store(false)
			var ae *AbortError
			if errors.As(err, &ae) {
				s.end(ae, nil, false)
			} else {
				s.end(&AbortError{Cause: err}, err, true)
			}
			s.runPending(ctx, gen) // calls the frame made still settle
			return
		}
		if !s.runPending(ctx, gen) {
			s.flush() // what the frame queued; a new reader has taken over
			return
		}
		s.flush() // writes, or hands to the writer, what the frame produced
		s.inReader.Store(false)
		select {
		case <-s.done:
			return
		default:
		}
	}
}

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
		s.safely(ctx, c.fn)
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

// spawn runs fn on a goroutine counted against MaxInFlight, or queues it
// behind the calls already waiting for one. It reports false when the
// session has ended or, having aborted it, when MaxQueued is exceeded.
func (s *Session) spawn(fn func(ctx context.Context)) bool {
	now, ok := s.admit(fn)
	if !ok || !now {
		return ok
	}
	return s.launch(fn)
}

// admit counts fn in flight and reports now when it may run at once;
// otherwise fn is queued and runs when a slot frees. Calls queue in
// arrival order, behind any already queued. ok is false, the session
// aborted, when the queue is full.
func (s *Session) admit(fn func(ctx context.Context)) (now, ok bool) {
	s.qmu.Lock()
	if s.inflight < s.opts.maxInFlight() && len(s.queued) == 0 {
		s.inflight++
		s.qmu.Unlock()
		return true, true
	}
	if len(s.queued) >= s.opts.maxQueued() {
		s.qmu.Unlock()
		err := limitErrorf("more than %d calls waiting behind %d in flight", s.opts.maxQueued(), s.opts.maxInFlight())
		s.end(&AbortError{Cause: err}, err, true)
		return false, false
	}
	s.queued = append(s.queued, fn)
	s.qmu.Unlock()
	return false, true
}

// done ends a call in flight and returns the next queued one, which takes
// its slot, or nil.
func (s *Session) done1() func(context.Context) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if len(s.queued) > 0 {
		fn := s.queued[0]
		s.queued[0] = nil
		s.queued = s.queued[1:]
		if len(s.queued) == 0 {
			s.queued = nil // let a long burst's backing array go
		}
		return fn
	}
	s.inflight--
	return nil
}

// launch runs fn, already counted in flight, on a worker goroutine. It
// reports false, uncounting fn, when the session has ended.
func (s *Session) launch(fn func(ctx context.Context)) bool {
	select {
	case s.idle <- fn:
		// A parked worker took it. Its stack has already grown to what a
		// call needs, which a fresh goroutine would do again on every call.
		return true
	default:
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		if next := s.done1(); next != nil {
			next(s.ctx) // the session ended: the call fails at once
			for next = s.done1(); next != nil; next = s.done1() {
				next(s.ctx)
			}
		}
		return false
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go s.worker(fn)
	return true
}

// worker runs fn, then up to maxIdleWorkers of them wait for further calls
// until the session ends.
func (s *Session) worker(fn func(ctx context.Context)) {
	defer s.wg.Done()
	ctx := withGoroutine(s.ctx)
	for {
		s.run(ctx, fn)
		if s.idlers.Add(1) > maxIdleWorkers {
			s.idlers.Add(-1)
			return
		}
		select {
		case fn = <-s.idle:
			s.idlers.Add(-1)
		case <-s.done:
			s.idlers.Add(-1)
			return
		}
	}
}

// run runs fn and then the calls queued behind the limit, one slot's worth.
func (s *Session) run(ctx context.Context, fn func(ctx context.Context)) {
	for fn != nil {
		s.safely(ctx, fn)
		fn = s.done1()
	}
}

// safely runs fn, ending only this session should it panic.
func (s *Session) safely(ctx context.Context, fn func(ctx context.Context)) {
	defer s.recoverPeer()
	fn(ctx)
}

// turnFor reserves a turn, into t, on the object a call of path on target
// runs a method of, and reports false when the call does not reach one
// directly.
func turnFor(t *ticket, target any, path []string) bool {
	if o, ok := target.(*localObj); ok && len(path) <= 1 {
		o.turns.reserveInto(t)
		return true
	}
	return false
}

// turnQ is the queue of turns of one object.
type turnQ struct {
	mu   sync.Mutex
	tail *ticket // the last turn handed out, nil when none is pending
}

// ticket is one call's turn on an object, and the record of that call
// while it runs.
type ticket struct {
	q      *turnQ
	sess   *Session
	prev   *ticket       // the turn ahead while this one waits (q.mu)
	next   *ticket       // the turn behind (q.mu)
	ready  chan struct{} // closed when this call may start; nil if it could at once
	passed bool          // later calls may start (q.mu)
	gid    atomic.Uint64 // the goroutine running the call, once it started
	key    any           // what the call runs (a *method, or a name on a dynamic object)

	// The rest belongs to the goroutine running the call.
	deferred []*Stub         // stubs the method released while it ran
	taken    map[*Stub]*Stub // stubs its result took over, to what they became
}

// reserveInto hands out the next turn, in t.
func (q *turnQ) reserveInto(t *ticket) {
	t.q = q
	q.mu.Lock()
	if p := q.tail; p != nil && !p.passed {
		t.prev, p.next = p, t
		t.ready = make(chan struct{})
	}
	q.tail = t
	q.mu.Unlock()
}

// isReady reports whether the call may start now.
func (t *ticket) isReady() bool {
	if t.ready == nil {
		return true
	}
	select {
	case <-t.ready:
		return true
	default:
		return false
	}
}

// pass lets the next call start. It is idempotent.
func (t *ticket) pass() {
	q := t.q
	q.mu.Lock()
	if t.passed {
		q.mu.Unlock()
		return
	}
	t.passed = true
	if n := t.next; n != nil {
		n.prev = nil
		close(n.ready)
	}
	if q.tail == t {
		q.tail = nil
	}
	q.mu.Unlock()
}

// wait blocks until the call may start or ctx ends. While it waits it
// looks, now and then, whether the call ahead is blocked, and if so lets
// this one start.
func (t *ticket) wait(ctx context.Context) error {
	if t.isReady() {
		return nil
	}
	delay := yieldCheck
	timer := time.NewTimer(delay)
	defer timer.Stop()
	seen := 0 // consecutive looks that found the call ahead waiting on a lock
	for {
		select {
		case <-t.ready:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		t.q.mu.Lock()
		p := t.prev
		var g uint64
		if p != nil && !p.passed {
			g = p.gid.Load()
		}
		t.q.mu.Unlock()
		if g != 0 {
			switch goroutineBlocked(g) {
			case blockedWait:
				t.yielded(p)
			case blockedLock:
				// A lock is often held for a moment only: look twice.
				if seen++; seen >= 2 {
					t.yielded(p)
				}
			default:
				seen = 0
			}
		}
		delay = min(2*delay, yieldCheckMax)
		timer.Reset(delay)
	}
}

// yielded lets the next call start past p, seen blocked, and remembers
// that what p runs blocks: its later calls in the session let the next
// call start as soon as they start, as a JavaScript async method does at
// its first await, instead of holding it for a look.
func (t *ticket) yielded(p *ticket) {
	if p.key != nil && p.sess != nil {
		p.sess.blocking.Store(p.key, struct{}{})
	}
	p.pass()
}

// begin records that the call runs on goroutine gid, so that releases it
// makes are put off until its result is sent.
func (s *Session) begin(t *ticket, gid uint64, key any) {
	t.sess, t.key = s, key
	t.gid.Store(gid)
	s.runMu.Lock()
	s.running = append(s.running, t)
	s.runMu.Unlock()
	s.nrunning.Add(1)
	if key == nil {
		return
	}
	if _, ok := s.blocking.Load(key); ok {
		t.pass()
	}
}

// finish ends what begin started and makes the releases the method put
// off.
func (s *Session) finish(t *ticket) {
	s.runMu.Lock()
	for i, r := range s.running {
		if r == t {
			last := len(s.running) - 1
			s.running[i] = s.running[last]
			s.running[last] = nil
			s.running = s.running[:last]
			break
		}
	}
	s.runMu.Unlock()
	s.nrunning.Add(-1)
	for _, d := range t.deferred {
		if d != nil {
			d.drop()
		}
	}
	t.deferred, t.taken = nil, nil
}

// runningHere returns the call running on the calling goroutine, if any.
func (s *Session) runningHere() *ticket {
	if s.nrunning.Load() == 0 {
		return nil
	}
	g := goroutineID()
	s.runMu.Lock()
	defer s.runMu.Unlock()
	for _, r := range s.running {
		if r.gid.Load() == g {
			return r
		}
	}
	return nil
}
