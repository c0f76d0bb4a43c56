package capnweb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Default limits, matching what the JavaScript implementation accepts.
const (
	DefaultMaxMessageSize  = 32 << 20
	DefaultMaxDepth        = 256
	DefaultMaxBigIntDigits = 16384
	DefaultMaxInFlight     = 1024
	DefaultMaxQueued       = 64 * DefaultMaxInFlight
)

// Options configures a [Session]. The zero value is ready to use.
type Options struct {
	// MaxMessageSize is the largest frame accepted from the peer, in bytes.
	// Zero means DefaultMaxMessageSize. A larger frame aborts the session.
	MaxMessageSize int
	// MaxDepth bounds how deeply values nest; a value at depth MaxDepth or
	// more aborts the session (received) or fails the send. Zero means
	// DefaultMaxDepth, which is also the most allowed.
	MaxDepth int
	// MaxBigIntDigits bounds the digits of a received bigint. Zero means
	// DefaultMaxBigIntDigits.
	MaxBigIntDigits int
	// MaxInFlight bounds the peer's calls running at once in this session.
	// Calls beyond it wait, in arrival order, until running ones finish, as
	// a JavaScript server would let a Promise.all of thousands run. Zero
	// means DefaultMaxInFlight.
	MaxInFlight int
	// MaxQueued bounds the calls waiting for MaxInFlight, which is what
	// protects memory from a peer that never stops calling: beyond it the
	// session aborts with ErrLimit. Zero means DefaultMaxQueued.
	MaxQueued int
	// OrderedObjects makes JavaScript objects reach Go code as *Object,
	// keys in the peer's order, wherever the Go side asks for any: method
	// parameters of type any, the arguments of a [Handler] or [Func], and
	// the results of [Stub.Await] and the calls built on it. Without it
	// they arrive as map[string]any, except in parameters of type [Value]
	// or [Object]. Objects are always sent in their order.
	OrderedObjects bool
	// CloseTimeout bounds how long closing waits to flush the last frames.
	// Zero means 5 seconds.
	CloseTimeout time.Duration
}

func (o *Options) maxDepth() int {
	if o.MaxDepth <= 0 || o.MaxDepth > DefaultMaxDepth {
		return DefaultMaxDepth
	}
	return o.MaxDepth
}

func (o *Options) maxMessage() int {
	if o.MaxMessageSize <= 0 {
		return DefaultMaxMessageSize
	}
	return o.MaxMessageSize
}

func (o *Options) maxBigDigits() int {
	if o.MaxBigIntDigits <= 0 {
		return DefaultMaxBigIntDigits
	}
	return o.MaxBigIntDigits
}

func (o *Options) maxInFlight() int {
	if o.MaxInFlight <= 0 {
		return DefaultMaxInFlight
	}
	return o.MaxInFlight
}

func (o *Options) maxQueued() int {
	if o.MaxQueued <= 0 {
		return DefaultMaxQueued
	}
	return o.MaxQueued
}

func (o *Options) closeTimeout() time.Duration {
	if o.CloseTimeout <= 0 {
		return 5 * time.Second
	}
	return o.CloseTimeout
}

// exportEntry is one row of the export table: something the peer can name.
type exportEntry struct {
	refs   int64
	fut    *future // settles with the value (an object export is settled at once)
	isPush bool
	pulled bool
	sent   bool
}

// importEntry is one row of the import table: something of the peer's we
// can name.
type importEntry struct {
	id      int64
	intro   int64 // references the peer gave us, returned in "release"
	handles int   // live *Stub handles
	fut     *future
	pulled  bool
	inTable bool
}

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
	blocking sync.Map                   // ticket keys → struct{}: seen blocked here (turns.go)

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

	runMu    sync.Mutex
	running  []*ticket    // Go method calls under way, by goroutine
	nrunning atomic.Int32 // len(running), read without the lock
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
	}
	if opts != nil {
		s.opts = *opts
	}
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

// Close ends the session without an abort message, closes the transport
// normally and waits for every goroutine of the session. It is idempotent.
func (s *Session) Close() error {
	s.end(ErrClosed, nil, false)
	s.wg.Wait()
	return nil
}

// Abort ends the session, telling the peer why: it sends an abort message
// carrying reason (encoded like a call's error), then closes the transport
// with the reason. Unlike Close it does not wait for the session's
// goroutines, so a method may abort its own session; call Close afterwards
// to wait.
func (s *Session) Abort(reason error) {
	if reason == nil {
		reason = errors.New("session aborted")
	}
	s.end(&AbortError{Cause: reason}, reason, true)
}

// end moves the session to its final state once. With sendAbort, an abort
// frame carrying reason is queued before the transport closes.
func (s *Session) end(err error, reason error, sendAbort bool) {
	var abortFrame []byte
	if sendAbort {
		re := s.lowerError(reason, 0)
		s.mu.Lock()
		b := []byte(`["abort",`)
		b, encErr := s.encode(b, re, 0)
		s.mu.Unlock()
		if encErr == nil {
			abortFrame = append(b, ']')
		}
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.err = err
	s.closeErr = reason
	if abortFrame != nil {
		s.outq = append(s.outq, abortFrame)
	}
	imports := s.imports
	exports := s.exports
	for _, imp := range imports {
		imp.inTable = false
	}
	s.imports = map[int64]*importEntry{}
	s.exports = map[int64]*exportEntry{}
	close(s.done)
	s.mu.Unlock()
	s.signal()
	s.cancel()
	if s.handoff != nil {
		s.handoff.Stop()
	}
	time.AfterFunc(s.opts.closeTimeout(), s.ioCancel)

	failure := err
	for _, imp := range imports {
		if imp.fut != nil {
			imp.fut.settle(nil, failure)
		}
	}
	for _, e := range exports {
		e := e
		e.fut.onDone(func() { s.releaseTree(e.fut.val) })
	}
	// Dispose whatever is still alive, main included.
	s.objMu.Lock()
	var left []*localObj
	for o := range s.objs {
		if !o.disposed {
			o.disposed = true
			left = append(left, o)
		}
	}
	s.objs = map[*localObj]struct{}{}
	s.byKey = map[any]*localObj{}
	s.objMu.Unlock()
	for _, o := range left {
		o.dispose()
	}
}

func (s *Session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enqueueLocked queues a frame; s.mu must be held. The caller must call
// flush once it has released s.mu.
func (s *Session) enqueueLocked(b []byte) {
	if s.ended {
		return
	}
	s.outq = append(s.outq, b)
}

// flush sends the queued frames. When nobody is writing, the caller writes
// them itself, which saves waking the writer goroutine on the path of every
// call. The reader may do so only without waiting: a reader blocked on a
// full socket, facing a peer blocked the same way, would stop both sides.
// So the reader writes through the transport's no-wait path when it has
// one, and leaves what the socket did not take to the writer goroutine.
func (s *Session) flush() {
	s.mu.Lock()
	if s.writing || len(s.outq) == 0 {
		s.mu.Unlock()
		return
	}
	if s.ended {
		s.mu.Unlock()
		s.signal()
		return
	}
	s.writing = true
	if s.inReader.Load() {
		nw, ok := s.t.(NoWaitSender)
		if !ok {
			s.writing = false
			s.mu.Unlock()
			s.signal()
			return
		}
		batch := s.outq
		s.outq = nil
		s.mu.Unlock()
		sent, flushed, err := nw.SendNoWait(s.ioCtx, batch)
		s.mu.Lock()
		if !sent {
			s.outq = append(batch, s.outq...)
		}
		s.writing = false
		// The writer skips its wake-ups while we write, so it must hear
		// from us about anything left, and about the end (it closes).
		again := !sent || !flushed || len(s.outq) > 0 || s.ended
		s.mu.Unlock()
		if err != nil {
			s.end(&AbortError{Remote: true, Cause: err}, nil, false)
		}
		if again {
			s.signal()
		}
		return
	}
	s.drainLocked()
	s.writing = false
	again := s.ended || len(s.outq) > 0
	s.mu.Unlock()
	if again {
		s.signal()
	}
}

// drainLocked writes queued frames until none are left, releasing s.mu
// while it writes. s.writing must be set by the caller.
func (s *Session) drainLocked() {
	for len(s.outq) > 0 {
		batch := s.outq
		s.outq = nil
		s.mu.Unlock()
		var err error
		bt, batched := s.t.(Batcher)
		batched = batched && len(batch) > 1
		if batched {
			bt.BeginBatch()
		}
		for _, b := range batch {
			if err = s.t.Send(s.ioCtx, b); err != nil {
				break
			}
		}
		if batched {
			if ferr := bt.EndBatch(); err == nil {
				err = ferr
			}
		}
		if err != nil {
			s.end(&AbortError{Remote: true, Cause: err}, nil, false)
			s.mu.Lock()
			s.outq = nil
			return
		}
		s.mu.Lock()
	}
}

func (s *Session) writeLoop() {
	defer s.wg.Done()
	bt, batched := s.t.(Batcher)
	for range s.wake {
		s.mu.Lock()
		if s.writing {
			// An inline writer is at work; it signals again when done.
			s.mu.Unlock()
			continue
		}
		s.writing = true
		s.drainLocked()
		s.mu.Unlock()
		var err error
		if batched {
			// The reader may have left part of its last batch unwritten.
			err = bt.EndBatch()
		}
		s.mu.Lock()
		s.writing = false
		ended, reason, again := s.ended, s.closeErr, len(s.outq) > 0
		s.mu.Unlock()
		switch {
		case ended:
			s.t.Close(reason)
			s.ioCancel()
			return
		case err != nil:
			s.end(&AbortError{Remote: true, Cause: err}, nil, false) // wakes this loop to close
		case again:
			s.signal()
		}
	}
}

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

// handle processes one frame from the peer. A returned error aborts the
// session.
func (s *Session) handle(msg []byte) error {
	if done, err := s.handleFast(msg); done {
		return err
	}
	v, err := s.parser.parse(msg)
	if err != nil {
		return err
	}
	return s.handleValue(v, msg)
}

// handleValue processes a parsed frame; msg is its text, for errors.
func (s *Session) handleValue(v any, msg []byte) error {
	m, ok := v.([]any)
	if !ok || len(m) == 0 {
		return protoErrorf("bad RPC message: %s", msg)
	}
	typ, _ := m[0].(string)
	switch typ {
	case "push":
		if len(m) != 2 {
			break
		}
		return s.handlePush(m[1])
	case "stream", "pipe":
		if typ == "stream" && len(m) != 2 || typ == "pipe" && len(m) != 1 {
			break
		}
		s.mu.Lock()
		s.peerPushes++ // they share the push counter
		s.mu.Unlock()
		return fmt.Errorf("%w: %q messages (streams) are not supported by this peer", ErrUnsupported, typ)
	case "pull":
		if len(m) != 2 {
			break
		}
		id, ok := wireID(m[1])
		if !ok {
			break
		}
		return s.handlePull(id)
	case "resolve", "reject":
		if len(m) != 3 {
			break
		}
		id, ok := wireID(m[1])
		if !ok {
			break
		}
		return s.handleResolve(id, m[2], typ == "reject")
	case "release":
		if len(m) != 3 {
			break
		}
		id, ok1 := wireID(m[1])
		n, ok2 := wireID(m[2])
		if !ok1 || !ok2 || n < 0 {
			break
		}
		return s.handleRelease(id, n)
	case "abort":
		if len(m) != 2 {
			break
		}
		ev := &evaluator{s: s, src: s}
		val, err := ev.eval(m[1], 0)
		if err != nil {
			return err
		}
		cause := s.toRemoteError(val)
		s.releaseTree(val)
		return &AbortError{Remote: true, Cause: cause}
	}
	return protoErrorf("bad RPC message: %s", msg)
}

// handleFast handles the two frames every call brings, ["pull",id] and
// ["release",id,n], spelled the way both implementations write them,
// without building a value tree. It reports false for anything else, which
// the general path then handles (and refuses if it must).
func (s *Session) handleFast(msg []byte) (bool, error) {
	const pull, release = `["pull",`, `["release",`
	switch {
	case len(msg) > len(pull) && string(msg[:len(pull)]) == pull:
		id, rest, ok := leadingID(msg[len(pull):])
		if ok && string(rest) == "]" {
			return true, s.handlePull(id)
		}
	case len(msg) > len(release) && string(msg[:len(release)]) == release:
		id, rest, ok := leadingID(msg[len(release):])
		if ok && len(rest) > 1 && rest[0] == ',' {
			n, rest, ok := leadingID(rest[1:])
			if ok && n >= 0 && string(rest) == "]" {
				return true, s.handleRelease(id, n)
			}
		}
	}
	return false, nil
}

// leadingID reads an integer in plain JSON spelling (optional minus, no
// leading zeros, at most 15 digits so it is a safe integer) from the start
// of b.
func leadingID(b []byte) (n int64, rest []byte, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	i := 0
	for i < len(b) && i < 16 && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	if i == 0 || i > 15 || i > 1 && b[0] == '0' {
		return 0, nil, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}

func wireID(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i > maxSafeInt || i < -maxSafeInt {
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || f != float64(int64(f)) || f > maxSafeInt || f < -maxSafeInt {
			return 0, false
		}
		return int64(f), true
	}
	return i, true
}

// toRemoteError makes a rejection or abort reason of the value v
// (owned). Its objects become maps unless the session keeps their order,
// as Go code reads them.
func (s *Session) toRemoteError(v any) *RemoteError {
	re, ok := v.(*RemoteError)
	if !ok {
		re = &RemoteError{Value: v}
	}
	ordered := s.opts.OrderedObjects
	re.Value, _ = outward(re.Value, ordered, false)
	for k, p := range re.Props {
		re.Props[k], _ = outward(p, ordered, false)
	}
	return re
}

func (s *Session) handlePush(expr any) error {
	s.mu.Lock()
	s.peerPushes++
	id := s.peerPushes
	s.mu.Unlock()
	ev := &evaluator{s: s, src: s, onReader: true}
	val, err := ev.eval(expr, 0)
	if err != nil {
		return err
	}
	fut := s.futureOf(val, ev.pending)
	e := &exportEntry{refs: 1, fut: fut, isPush: true}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return nil
	}
	s.exports[id] = e
	s.mu.Unlock()
	fut.onDone(func() { s.pushSettled(id, e) })
	return nil
}

// futureOf turns an evaluated tree into a future: a call's own future, an
// already settled one for plain data, or one settled by a goroutine that
// waits for the placeholders inside.
func (s *Session) futureOf(val any, pending bool) *future {
	if f, ok := val.(*future); ok {
		return f
	}
	if !pending {
		return settledFuture(val, nil)
	}
	f := newFuture()
	if !s.spawn(func(ctx context.Context) {
		v, err := s.awaitTree(ctx, val)
		f.settle(v, err)
	}) {
		f.settle(nil, s.Err())
	}
	return f
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

// maxIdleWorkers bounds the goroutines a session keeps parked for its next
// calls.
const maxIdleWorkers = 16

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
		fn(ctx)
		fn = s.done1()
	}
}

// pushSettled sends the result of push id if the peer pulled it.
func (s *Session) pushSettled(id int64, e *exportEntry) {
	s.mu.Lock()
	if e.pulled && !e.sent && s.exports[id] == e {
		s.sendResolutionLocked(id, e)
	}
	s.mu.Unlock()
	s.flush()
}

// sendResolutionLocked queues resolve/reject for export id. s.mu is held.
// A result that cannot be encoded turns into a rejection saying why.
func (s *Session) sendResolutionLocked(id int64, e *exportEntry) {
	e.sent = true
	frame := func(kind string, v any) ([]byte, error) {
		b := append(make([]byte, 0, 64), `["`...)
		b = append(b, kind...)
		b = append(b, `",`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
		b, err := s.encode(b, v, 0)
		return append(b, ']'), err
	}
	var b []byte
	var err error
	if e.fut.err != nil {
		re, ok := e.fut.err.(*RemoteError)
		if !ok {
			re = s.lowerErrorLocked(e.fut.err)
		}
		b, err = frame("reject", re)
	} else {
		b, err = frame("resolve", e.fut.val)
	}
	if err != nil {
		b, _ = frame("reject", &RemoteError{Name: NameError, Message: WireMessage(err), IsError: true})
	}
	s.enqueueLocked(b)
}

// lowerErrorLocked is lowerError for plain errors, usable with s.mu held:
// it drops props that hold objects or stubs, which would need the lock.
func (s *Session) lowerErrorLocked(err error) *RemoteError {
	var ce *Error
	out := &RemoteError{Name: NameError, Message: WireMessage(err), IsError: true}
	if errors.As(err, &ce) {
		if ce.Name != "" {
			out.Name = ce.Name
		}
		if ce == err {
			out.Message = ce.Message
		}
	}
	return out
}

func (s *Session) handlePull(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.exports[id]
	if e == nil {
		return protoErrorf("no such export ID: %d", id)
	}
	if e.pulled {
		return nil
	}
	e.pulled = true
	if e.fut.isSettled() {
		s.sendResolutionLocked(id, e)
	}
	return nil
}

func (s *Session) handleRelease(id, n int64) error {
	s.mu.Lock()
	e := s.exports[id]
	if e == nil {
		s.mu.Unlock()
		return protoErrorf("no such entry on exports table: %d", id)
	}
	if e.refs < n {
		s.mu.Unlock()
		return protoErrorf("refcount would go negative: %d < %d", e.refs, n)
	}
	e.refs -= n
	if e.refs > 0 {
		s.mu.Unlock()
		return nil
	}
	delete(s.exports, id)
	s.mu.Unlock()
	e.fut.onDone(func() { s.releaseTree(e.fut.val) })
	return nil
}

func (s *Session) handleResolve(id int64, expr any, reject bool) error {
	ev := &evaluator{s: s, src: s}
	val, err := ev.eval(expr, 0)
	if err != nil {
		return err
	}
	s.mu.Lock()
	imp := s.imports[id]
	if imp == nil || imp.fut == nil {
		s.mu.Unlock()
		// Not (or no longer) ours to hold: drop it, releasing any stubs.
		s.releaseTree(val)
		return nil
	}
	delete(s.imports, id)
	imp.inTable = false
	b := []byte(`["release",`)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, imp.intro, 10)
	s.enqueueLocked(append(b, ']'))
	s.mu.Unlock()

	settle := func(v any, err error) {
		if reject && err == nil {
			err = s.toRemoteError(v)
			v = nil
		}
		imp.fut.settle(v, err)
	}
	if !ev.pending {
		settle(val, nil)
		return nil
	}
	if !s.spawn(func(ctx context.Context) { settle(s.awaitTree(ctx, val)) }) {
		imp.fut.settle(nil, s.Err())
	}
	return nil
}
