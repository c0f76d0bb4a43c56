package capnweb

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Turns: the order of calls on one object.
//
// JavaScript starts the calls to one object in the order they arrive, and
// a method runs until it returns or awaits before the next one starts. A
// Go method has no await to see, so each object passed by reference keeps
// a queue of turns: a call starts once the call ahead of it has returned,
// or is seen blocked, parked by the Go scheduler on a channel, a timer,
// the network or a lock, which is what awaiting looks like in Go. Then
// the next call starts while the blocked one goes on. A call that keeps
// running (computing, or writing a file) holds the next back, as it would
// in JavaScript; one that waits for the peer or for a later call does not.

// yieldCheck is how long a call may hold its object's turn before the
// call behind it looks whether it is blocked, and yieldCheckMax the
// longest wait between looks.
const (
	yieldCheck    = inlineBudget
	yieldCheckMax = 16 * time.Millisecond
)

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

// takeStub gives the result of the call the handle x: the result takes
// over the stubs a method returns, as in JavaScript, including those it
// released while it ran (on its way out, with defer). It returns nil when
// x was released before the call, or by someone else.
func (t *ticket) takeStub(x *Stub) *Stub {
	if st := t.taken[x]; st != nil {
		return st.Dup() // the same stub twice in one result
	}
	if !x.dropped.CompareAndSwap(false, true) {
		return nil
	}
	// The handle moves to the result; a release put off finds it gone.
	x.released.Store(true)
	st := &Stub{sess: x.sess, imp: x.imp}
	if t.taken == nil {
		t.taken = map[*Stub]*Stub{}
	}
	t.taken[x] = st
	return st
}

// maxDeferred bounds the releases a running method may have put off: a
// long-running method that releases many stubs does not hold them all.
const maxDeferred = 256

// deferRelease puts off the release of x until the call has sent its
// result.
func (t *ticket) deferRelease(x *Stub) {
	if len(t.deferred) >= maxDeferred {
		if old := t.deferred[0]; old != nil {
			old.drop()
		}
		t.deferred = append(t.deferred[:0], t.deferred[1:]...)
	}
	t.deferred = append(t.deferred, x)
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

type gidKey struct{}

// withGoroutine returns ctx noting the calling goroutine's ID, for the
// calls that goroutine runs. Worker goroutines and readers do it once.
func withGoroutine(ctx context.Context) context.Context {
	return context.WithValue(ctx, gidKey{}, goroutineID())
}

func goroutineOf(ctx context.Context) uint64 {
	g, _ := ctx.Value(gidKey{}).(uint64)
	return g
}

// goroutineID returns the calling goroutine's ID, read from its stack
// header. It costs about a microsecond, so it is read once per goroutine,
// not per call.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		n, _ := strconv.ParseUint(string(b[:i]), 10, 64)
		return n
	}
	return 0
}

type blockState int

const (
	notBlocked  blockState = iota
	blockedWait            // parked on a channel, timer, network, condition
	blockedLock            // parked on a mutex or semaphore
)

// goroutineBlocked reports how goroutine g is parked, from the runtime's
// dump of every goroutine. The dump stops the world for a moment, so it
// is taken only when a call has held its object for a while with another
// waiting behind it.
func goroutineBlocked(g uint64) blockState {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		if len(buf) >= 64<<20 {
			return notBlocked
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte("goroutine " + strconv.FormatUint(g, 10) + " [")
	i := 0
	for {
		j := bytes.Index(buf[i:], head)
		if j < 0 {
			return notBlocked // gone: it finished
		}
		i += j
		if i == 0 || buf[i-1] == '\n' {
			break
		}
		i += len(head)
	}
	state := buf[i+len(head):]
	if k := bytes.IndexAny(state, ",]"); k >= 0 {
		state = state[:k]
	}
	switch s := string(state); s {
	case "running", "runnable", "syscall", "preempted", "copystack":
		return notBlocked
	case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "semacquire":
		return blockedLock
	default:
		if bytes.HasPrefix(state, []byte("GC ")) {
			return notBlocked
		}
		return blockedWait
	}
}
