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
//  1. Goroutines. One reader (readLoop) receives frames and handles each
//     whole, in arrival order: it updates the tables (tables.go), queues
//     the frames that answer it and starts calls, but runs no code of the
//     user's except a Dispose. After each frame it runs the quick calls
//     the frame left (start, quickMethod: a Go method with a settled
//     target, plain-data arguments and a free turn, that has not overrun
//     inlineBudget in this session); one that runs past inlineBudget
//     makes a new reader take over (overran) and its method slow here.
//     Every other call, and every wait for results still missing from a
//     value the peer sent, runs on a worker (spawn, launch, worker), of
//     which up to maxIdleWorkers stay parked. Frames leave in the order
//     they were queued, written by whichever goroutine queued them while
//     nobody else writes, or by the writer (writeLoop, write.go); the
//     reader writes only through [NoWaitSender], never blocking on a full
//     socket. Callers' goroutines (the methods of [Stub]) queue frames and
//     wait for results; they never run the peer's calls.
//  2. Turns. Calls on one object start in arrival order (turnQ). A call
//     holds its object's turn until the first of: it returns; it waits
//     where capnweb sees it, that is on its ctx (ctx.Done: a select on it,
//     a context derived from it, a call into the peer through a Stub, an
//     Await; callCtx); it calls [Yield]; it has held the turn for
//     turnSlice. Then the next call starts while it goes on, as after an
//     await in JavaScript. The running call is found through the ctx its
//     method got, never through the goroutine it runs on.
//     Where this differs from JavaScript: a method that computes, or
//     blocks where capnweb cannot see (a channel or lock without its ctx),
//     for longer than turnSlice lets the next call on its object start
//     anyway, where JavaScript would hold it back until the method's first
//     await; and while it blocks so, it holds that call back for turnSlice.
//  3. Pipelined calls on a result still to come start in arrival order
//     once it has settled (startCall); a call whose arguments hold results
//     still to come takes its turn once they have arrived, so later calls
//     may pass it. Results go back in completion order. Calls on different
//     objects, and calls past their turn, run concurrently: objects shared
//     between sessions, and methods that wait, must be safe for concurrent
//     use.
//  4. Releases. A method's release of a stub its call got (an argument, a
//     stub made from one, a stub in what a call made with its ctx
//     returned) is put off until its result has been taken (releaseScope),
//     so that `defer p.Release(); return p` hands p over as in JavaScript.
//     Other releases take effect at once, wherever they are made.
//  5. Locks. s.mu, which guards the tables and the queue of frames, is
//     never held while a method runs or the transport sends or receives.
//     Dispose runs on whichever goroutine drops the last reference (the
//     reader, for a release frame), so it must not block for long. A
//     method must not Close its own session, which waits for the method;
//     Abort does not wait.
//  6. Bounds. Each call of the peer's, and each wait for a value's missing
//     results, counts against Options.MaxInFlight while it runs (admit);
//     beyond it calls queue in arrival order and a finishing call hands its
//     slot to the first one queued (run; the reader hands it to a worker,
//     runPending). More than Options.MaxQueued queued, or more memory held
//     than Options.MaxMemory (budget.go), aborts the session with
//     ErrLimit. When the session ends every call's context is cancelled,
//     queued calls fail at once, and Close returns only once every
//     goroutine above has returned.

// inlineBudget is how long a call may hold up the reader.
const inlineBudget = time.Millisecond

// turnSlice is how long a call may hold its object's turn without
// returning or waiting where capnweb sees it. Methods that wait take a ctx
// and give the turn up at once, so the slice matters for two kinds only.
// A method that computes keeps JavaScript's order for that long: a tenth
// of a second covers the tens of milliseconds of a synchronous JavaScript
// method a script may rely on (testdata/semantics.ts spins for 30 ms,
// with room for a loaded machine's scheduling). A method blocked out of
// capnweb's sight, on a channel the next call on its object would fill,
// holds that call back for that long, about what a person starts to
// notice, instead of deadlocking.
const turnSlice = 100 * time.Millisecond

// maxIdleWorkers bounds the goroutines a session keeps parked for its next
// calls.
const maxIdleWorkers = 16

// readLoop reads and handles frames until the session ends, or until a
// new reader (generation gen+1) took over while this one ran a call.
func (s *Session) readLoop(gen uint64) {
	defer s.wg.Done()
	ctx := s.ctx
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
	for {
		s.run(s.ctx, fn)
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
	prev   *ticket       // the turn ahead while this one waits (q.mu)
	next   *ticket       // the turn behind (q.mu)
	ready  chan struct{} // closed when this call may start; nil if it could at once
	passed atomic.Bool   // later calls may start (written under q.mu)
	began  atomic.Int64  // when the call began, in clock() time; 0 before
	ctx    callCtx       // the context its method runs with, from begin

	smu      sync.Mutex
	scope    *releaseScope // releases put off, made on first use (smu)
	finished bool          // the call's result has been taken (smu)

	taken map[*Stub]*Stub // stubs its result took over, to what they became (the lowering goroutine's)
}

// epoch is the origin of clock, set once at init.
var epoch = time.Now()

// clock is monotonic time in nanoseconds since epoch, never 0 after it.
func clock() int64 { return int64(time.Since(epoch)) + 1 }

// reserveInto hands out the next turn, in t.
func (q *turnQ) reserveInto(t *ticket) {
	t.q = q
	q.mu.Lock()
	if p := q.tail; p != nil && !p.passed.Load() {
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

// pass lets the next call start. It is idempotent, and cheap once done:
// a method's ctx calls it on every Done.
func (t *ticket) pass() {
	if t.passed.Load() {
		return
	}
	q := t.q
	q.mu.Lock()
	if t.passed.Load() {
		q.mu.Unlock()
		return
	}
	t.passed.Store(true)
	if n := t.next; n != nil {
		n.prev = nil
		close(n.ready)
	}
	if q.tail == t {
		q.tail = nil
	}
	q.mu.Unlock()
}

// wait blocks until the call may start or ctx ends. The call ahead gives
// its turn up itself when it returns or waits; once it has held the turn
// for slice, this one takes it.
func (t *ticket) wait(ctx context.Context, slice time.Duration) error {
	if t.isReady() {
		return nil
	}
	var timer *time.Timer
	for {
		t.q.mu.Lock()
		p := t.prev
		t.q.mu.Unlock()
		d := slice // the call ahead has not begun: look again then
		if p != nil {
			if b := p.began.Load(); b != 0 {
				if d = slice - time.Duration(clock()-b); d <= 0 {
					p.pass() // closes t.ready
				}
			}
		}
		if timer == nil {
			timer = time.NewTimer(max(d, 0))
			defer timer.Stop()
		} else {
			timer.Reset(max(d, 0))
		}
		select {
		case <-t.ready:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// begin starts the call's slice and returns the context its method runs
// with.
func (s *Session) begin(ctx context.Context, t *ticket) context.Context {
	t.began.Store(clock())
	t.ctx = callCtx{Context: ctx, t: t}
	return &t.ctx
}

// finish ends what begin started, once the call's result has been taken:
// it makes the releases the method put off.
func (s *Session) finish(t *ticket) {
	t.smu.Lock()
	t.finished = true
	sc := t.scope
	t.smu.Unlock()
	if sc != nil {
		sc.close()
	}
	t.taken = nil
}

// turnKey is the context key of the call a method runs for (a *ticket).
type turnKey struct{}

// callCtx is the context a Go method gets. It carries the call's turn,
// and gives it up when the method asks for Done: that is how Go code
// waits (a select on ctx.Done(), a context derived from ctx, a network
// call or a Stub call made with it), and so the point where a JavaScript
// method would await. A method that only polls ctx.Done() while it
// computes gives its turn up early; one that computes without its ctx
// keeps it for turnSlice.
type callCtx struct {
	context.Context
	t *ticket
}

func (c *callCtx) Done() <-chan struct{} {
	c.t.pass()
	return c.Context.Done()
}

func (c *callCtx) Value(key any) any {
	if key == (turnKey{}) {
		return c.t
	}
	return c.Context.Value(key)
}

// turnOf returns the call whose method runs with ctx, or nil.
func turnOf(ctx context.Context) *ticket {
	t, _ := ctx.Value(turnKey{}).(*ticket)
	return t
}

// Yield lets the next call on the object whose method runs with ctx (or a
// context derived from it) start now, while this one goes on, as an
// await does in JavaScript. A method needs it only where it blocks
// without its ctx (on a plain channel or a lock) and must not hold later
// calls back until turnSlice (a tenth of a second) has passed, or where
// it computes for long and later calls need not wait for it: waiting on
// ctx, or calling the peer through a [Stub], already yields. Outside a
// method, or once the method has yielded, Yield does nothing.
func Yield(ctx context.Context) {
	if t := turnOf(ctx); t != nil {
		t.pass()
	}
}

// releaseScope holds the releases a running call puts off until its
// result has been taken.
//
// Why by stub and not by goroutine: Release takes no ctx, so the call a
// release belongs to is recorded on the stub instead (Stub.owner). The
// stubs a result can hand over are those the call got: its arguments,
// the stubs it made from them (Pipeline, Map) and those in what the
// calls it made with its ctx returned. Releases of those wait; any other
// release, of a Dup (a handle made to be kept) among them, takes effect
// at once, so that nothing depends on which goroutine releases what, and
// a method that runs for the whole session holds back only the releases
// of its own stubs.
type releaseScope struct {
	mu       sync.Mutex
	done     bool
	deferred []*Stub
}

// maxDeferred bounds the releases a running method may have put off: a
// long-running method that releases many stubs does not hold them all.
const maxDeferred = 256

// scopeFor returns the call's release scope, made on first use; nil once
// the call has finished.
func (t *ticket) scopeFor() *releaseScope {
	t.smu.Lock()
	defer t.smu.Unlock()
	if t.finished {
		return nil
	}
	if t.scope == nil {
		t.scope = &releaseScope{}
	}
	return t.scope
}

// put puts off the release of x until the call has finished. It reports
// false when the call has already finished: x is then released at once.
func (sc *releaseScope) put(x *Stub) bool {
	sc.mu.Lock()
	if sc.done {
		sc.mu.Unlock()
		return false
	}
	var old *Stub
	if len(sc.deferred) >= maxDeferred {
		old = sc.deferred[0]
		sc.deferred = append(sc.deferred[:0], sc.deferred[1:]...)
	}
	sc.deferred = append(sc.deferred, x)
	sc.mu.Unlock()
	if old != nil {
		old.drop()
	}
	return true
}

// close makes the releases put off.
func (sc *releaseScope) close() {
	sc.mu.Lock()
	sc.done = true
	d := sc.deferred
	sc.deferred = nil
	sc.mu.Unlock()
	for _, x := range d {
		x.drop()
	}
}

// own records on the stubs in v, the arguments of the call, that the call
// got them.
func (t *ticket) own(v any) {
	var sc *releaseScope
	ownInto(v, func() *releaseScope {
		if sc == nil {
			sc = t.scopeFor()
		}
		return sc
	})
}

// ownInto sets the owner of the unowned stubs in v to scope(), called
// only when there is one. v is a tree the session built, so it nests
// Options.MaxDepth deep at most.
func ownInto(v any, scope func() *releaseScope) {
	switch x := v.(type) {
	case *Stub:
		if x != nil && x.owner == nil {
			x.owner = scope()
		}
	case []any:
		for _, e := range x {
			ownInto(e, scope)
		}
	case *Object:
		for _, e := range x.vals {
			ownInto(e, scope)
		}
	case map[string]any:
		for _, e := range x {
			ownInto(e, scope)
		}
	}
}
