package capnweb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Session is one Cap'n Web connection. The protocol is symmetric: each side
// may export a main object and call the other's.
//
// # Exporting Go values
//
// The main object, and any value returned or passed that is a struct
// pointer with callable methods, a func, a [Func] or a [Handler], is passed
// by reference: the peer gets a stub. A struct's exported methods are
// reachable by their lowerCamel names ("AddUser" → "addUser"). A callable
// method takes an optional leading context.Context, then its arguments, and
// returns (), (error), (T) or (T, error). Missing arguments arrive as zero
// values. Fields are not readable by the peer unless tagged
// `capnweb:"name"`; reading a method's name yields a callable. Methods
// named Then or Dispose, and names JavaScript reserves, are never exposed.
// If the object implements [Disposer], Dispose runs once the peer released
// every reference or the session ended.
//
// # Concurrency
//
// A session runs one reader goroutine (it decodes frames in order) and one
// writer goroutine (frames leave in the order they were queued; the reader
// and callers also write when the writer is idle, the reader only what the
// socket takes without waiting). A call to a method of a Go object with
// plain-data arguments may run on the reader, after the frame that made it:
// that spares waking another thread. Should it run longer than about a
// millisecond, reading moves to a new goroutine at once, and that method's
// later calls in the session run on goroutines of their own (the session
// keeps a few parked between calls).
//
// Calls to one object start in the order they arrived, as in JavaScript,
// and a call runs alone on its object until it returns or blocks: parks
// on a channel, a timer, the network or a lock (a call to the peer, say),
// which is Go's counterpart of an await. Then the next call starts while
// the blocked one goes on, so a method that waits for a later call cannot
// deadlock; a blocked call is noticed within a few milliseconds. A method
// that computes or writes a file for a long time holds its object's later
// calls back, as it would in JavaScript. Calls on different objects run
// concurrently, so objects shared between sessions, and a method that
// blocks, must still be safe for concurrent use. A call whose arguments
// hold results still to come takes its place once they have arrived.
// Results go back in completion order. Each call's context is cancelled
// when the session ends. All methods of Session and [Stub] are safe for
// concurrent use.
//
// # Lifetime
//
// A session ends when Close is called, when either side aborts, or when the
// transport fails. Then every in-flight call's context is cancelled, every
// pending import fails with an error wrapping [ErrClosed], and every export
// (the main object included) is disposed. Close is idempotent and returns
// only after the session's goroutines, including in-flight calls, have
// returned.
type Session struct {
	t    Transport
	opts Options

	ctx    context.Context // cancelled when the session ends
	cancel context.CancelFunc
	// ioCtx bounds transport I/O. It outlives ctx so that the last frames
	// (an abort) can still be written, and ends once the transport is closed
	// or the close timeout passed.
	ioCtx    context.Context
	ioCancel context.CancelFunc
	wg       sync.WaitGroup

	qmu      sync.Mutex
	inflight int                        // calls running (qmu)
	queued   []func(context.Context)    // calls waiting for MaxInFlight (qmu)
	idle     chan func(context.Context) // hands calls to parked workers
	idlers   atomic.Int32               // workers parked on idle
	inReader atomic.Bool                // the reader is handling a frame
	parser   jsonParser                 // the reader's
	pending  []pendingCall              // calls the reader runs after the current frame (the reader's)
	handoff  *time.Timer                // fires overran when an inline call runs long
	slow     sync.Map                   // *method → struct{}: overran inlineBudget here
	slice    time.Duration              // how long a call may hold its object's turn (turnSlice)

	readerMu     sync.Mutex
	readerGen    uint64    // bumped when a new reader takes over
	inlineMethod *method   // the inline call under way, or nil
	inlineSince  time.Time // when it started
	handoffArmed bool      // the handoff timer is set

	mu         sync.Mutex
	exports    map[int64]*exportEntry
	imports    map[int64]*importEntry
	nextExport int64 // next negative export ID
	nextImport int64 // next positive import ID (our pushes)
	peerPushes int64 // positive IDs the peer has used
	outq       [][]byte
	writing    bool // a goroutine is writing outq
	wake       chan struct{}
	ended      bool
	err        error
	closeErr   error // reason given to the transport, nil for a normal close
	done       chan struct{}

	objMu sync.Mutex
	objs  map[*localObj]struct{} // live objects, for disposal at the end
	byKey map[any]*localObj      // identity of pointer objects

	mem meter // the memory budget (budget.go)
}

// NewSession starts a session on t. main is the object the peer reaches as
// its main stub (nil for none: the peer's calls to it then reject). opts may
// be nil. The session owns t from now on and closes it when it ends.
func NewSession(t Transport, main any, opts *Options) (*Session, error) {
	s := &Session{
		t:          t,
		exports:    map[int64]*exportEntry{},
		imports:    map[int64]*importEntry{},
		nextExport: -1,
		nextImport: 1,
		wake:       make(chan struct{}, 1),
		idle:       make(chan func(context.Context)),
		done:       make(chan struct{}),
		objs:       map[*localObj]struct{}{},
		byKey:      map[any]*localObj{},
		slice:      turnSlice,
	}
	if opts != nil {
		s.opts = *opts
	}
	s.mem.max = s.opts.maxMemory()
	ctx, cancel := context.WithCancel(context.Background())
	s.ctx, s.cancel = context.WithValue(ctx, sessionKey{}, s), cancel
	s.ioCtx, s.ioCancel = context.WithCancel(context.Background())
	if main != nil {
		o := newLocalObj(main)
		if o == nil {
			return nil, fmt.Errorf("%w: main object of type %T has no callable methods", ErrUnsupported, main)
		}
		o = s.intern(o)
		s.hold(o)
		s.exports[0] = &exportEntry{refs: 1, fut: settledFuture(o, nil)}
	} else {
		s.exports[0] = &exportEntry{refs: 1, fut: settledFuture(nil, &Error{Message: "This connection has no main object."})}
	}
	s.imports[0] = &importEntry{id: 0, intro: 1, handles: 1, inTable: true}
	if b, ok := t.(IOBinder); ok {
		b.BindIO(s.ioCtx)
	}
	s.handoff = time.AfterFunc(time.Hour, s.overran)
	s.handoff.Stop()
	s.wg.Add(2)
	go s.readLoop(0)
	go s.writeLoop()
	return s, nil
}

// Serve runs a session on t until it ends or ctx is done, then closes it.
// It returns nil when the peer closed the connection normally or ctx ended,
// and the reason otherwise.
func Serve(ctx context.Context, t Transport, main any, opts *Options) error {
	s, err := NewSession(t, main, opts)
	if err != nil {
		t.Close(err)
		return err
	}
	select {
	case <-ctx.Done():
	case <-s.Done():
	}
	s.Close()
	if err := s.Err(); !normalEnd(err) {
		return err
	}
	return nil
}

// normalEnd reports whether err is a session end nobody needs to hear
// about: a local Close, or the peer closing the connection normally.
func normalEnd(err error) bool {
	if err == ErrClosed {
		return true
	}
	var ae *AbortError
	var ce *CloseError
	if errors.As(err, &ae) && ae.Remote && errors.As(ae.Cause, &ce) {
		return ce.Code == 1000 || ce.Code == 3000 && ce.Reason == jsShutdownReason
	}
	return false
}

// jsShutdownReason is what the JavaScript client says when its script
// disposes the main stub: a normal end.
const jsShutdownReason = "RPC session was shut down by disposing the main stub"

type sessionKey struct{}

// SessionFromContext returns the session of the call whose context ctx is
// (or derives from), or nil. Methods use it to reach the caller's main
// object or to end the session. A method must not call Close on its own
// session (Close waits for the method); Abort does not wait.
func SessionFromContext(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// Main returns a stub for the peer's main object. Releasing it is allowed
// and does nothing; it lives as long as the session.
func (s *Session) Main() *Stub {
	s.mu.Lock()
	imp := s.imports[0]
	if imp == nil {
		// The session has ended: the stub's calls fail with its error.
		s.mu.Unlock()
		return s.broken(s.closedErr())
	}
	imp.handles++
	s.mu.Unlock()
	return &Stub{sess: s, imp: imp}
}

// Done is closed when the session has ended (its goroutines may still be
// finishing; Close waits for them).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended, or nil while it runs. The error wraps
// [ErrClosed].
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
