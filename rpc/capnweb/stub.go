package capnweb

import (
	"context"
	"strconv"
	"sync/atomic"
)

// Stub is a reference to something the peer holds: its main object, an
// object or function it passed, or the pending result of a call (a
// promise). Calls made through a stub run on the peer.
//
// A Stub is one handle. Release it when done; [Stub.Dup] makes another
// handle to the same thing, and the peer is told only when the last handle
// is released. Stubs that arrive as arguments of a Go method belong to the
// call and are released when the method returns: Dup one to keep it.
// Stubs inside results (of [Stub.Call], [Stub.Await] and so on) belong to
// the caller. A Go method's result takes over the stubs in it, as in
// JavaScript (return a Dup of a stub you keep); other values you pass to
// the library are never taken over: it duplicates what it keeps.
//
// All methods are safe for concurrent use. Methods that send (Release,
// Pipeline, Await, Call and so on) may write the frame on the calling
// goroutine when the session's writer is idle, so they can block while the
// connection is congested; they never wait for the peer's answer except
// where documented (Await and the calls built on it).
type Stub struct {
	sess     *Session
	imp      *importEntry
	released atomic.Bool // the handle may not be used
	dropped  atomic.Bool // the handle no longer counts (it may be put off after released)
	// owner is the call this handle came to, whose releases of it wait
	// for its result (concurrency.go); nil for most handles. Set before
	// the handle is shared.
	owner *releaseScope
}

// broken returns a promise stub that has already failed with err.
func (s *Session) broken(err error) *Stub {
	return &Stub{sess: s, imp: &importEntry{intro: 1, handles: 1, fut: settledFuture(nil, err)}}
}

// IsPromise reports whether s stands for the result of a call rather than
// an object.
func (s *Stub) IsPromise() bool { return s.imp.fut != nil }

// Dup returns a new handle to the same reference.
func (s *Stub) Dup() *Stub {
	if s.released.Load() {
		return s.sess.broken(ErrReleased)
	}
	s.sess.mu.Lock()
	s.imp.handles++
	s.sess.mu.Unlock()
	// A Dup is a handle to keep: its releases are never put off.
	return &Stub{sess: s.sess, imp: s.imp}
}

// Release drops this handle. When it was the last one, the peer is told
// it may dispose the object. Release is idempotent.
//
// A Go method's release of a stub its call got (an argument, a stub made
// from one with Pipeline or Map, or a stub in what a call made with the
// method's ctx returned) takes effect once the method's result has
// been taken, so that the result may still hold that stub (with defer,
// typically): a method's result takes over the stubs in it, as in
// JavaScript. Other releases take effect at once; to return any other
// stub, return it without releasing it.
func (s *Stub) Release() {
	if s == nil || s.released.Load() {
		return
	}
	if s.owner != nil {
		if s.released.CompareAndSwap(false, true) && !s.owner.put(s) {
			s.drop()
		}
		return
	}
	s.drop()
}

// drop is Release as the library makes it: at once.
func (s *Stub) drop() {
	if s == nil {
		return
	}
	s.released.Store(true)
	if !s.dropped.CompareAndSwap(false, true) {
		return
	}
	sess, imp := s.sess, s.imp
	sess.mu.Lock()
	imp.handles--
	last := imp.handles == 0
	if last && imp.inTable && imp.id != 0 {
		delete(sess.imports, imp.id)
		imp.inTable = false
		b := []byte(`["release",`)
		b = strconv.AppendInt(b, imp.id, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, imp.intro, 10)
		sess.enqueueLocked(append(b, ']'))
	}
	sess.mu.Unlock()
	sess.flush()
	if last && imp.fut != nil {
		imp.fut.onDone(func() { sess.releaseTree(imp.fut.val) })
	}
}

// Pipeline starts a call of the member at path with args (a property read
// when args is nil; an empty path calls the stub itself) and returns the
// promise of its result at once, without waiting for this stub or the
// call. Calls on the returned promise are pipelined: they reach the peer
// before the result comes back. Release the promise when done.
func (s *Stub) Pipeline(path []string, args []any) *Stub {
	return s.pipeline(path, args, args != nil)
}

func (s *Stub) pipeline(path []string, args []any, hasArgs bool) *Stub {
	sess := s.sess
	if s.released.Load() {
		return sess.broken(ErrReleased)
	}
	var largs []any
	if hasArgs {
		la, err := sess.lower(args, 0)
		if err != nil {
			return sess.broken(err)
		}
		largs = la.([]any)
	}
	sess.mu.Lock()
	if sess.ended {
		sess.mu.Unlock()
		sess.releaseTree(largs)
		return sess.broken(sess.closedErr())
	}
	imp := s.imp
	if !imp.inTable {
		sess.mu.Unlock()
		defer sess.releaseTree(largs)
		if imp.fut == nil || !imp.fut.isSettled() {
			return sess.broken(ErrReleased)
		}
		if imp.fut.err != nil {
			return sess.broken(imp.fut.err)
		}
		p := sess.localPipeline(imp.fut.val, path, largs, hasArgs)
		if p.owner == nil {
			p.owner = s.owner // not shared yet
		}
		return p
	}
	b := make([]byte, 0, 64)
	b = append(b, `["push",["pipeline",`...)
	b = strconv.AppendInt(b, imp.id, 10)
	b = append(b, ",["...)
	for i, p := range path {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, p)
	}
	b = append(b, ']')
	if hasArgs {
		b = append(b, ",["...)
		for i, a := range largs {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = sess.encode(b, a, 1); err != nil {
				sess.mu.Unlock()
				sess.releaseTree(largs)
				return sess.broken(err)
			}
		}
		b = append(b, ']')
	}
	b = append(b, "]]"...)
	ne := sess.pushLocked(b)
	sess.mu.Unlock()
	sess.flush()
	// The export table now holds what the frame introduced.
	sess.releaseTree(largs)
	return &Stub{sess: sess, imp: ne, owner: s.owner}
}

// localPipeline continues a pipeline on a promise that already resolved
// to val (borrowed).
func (s *Session) localPipeline(val any, path []string, args []any, hasArgs bool) *Stub {
	if st, ok := val.(*Stub); ok {
		return st.pipeline(path, args, hasArgs)
	}
	f := newFuture()
	var argsCopy []any
	if hasArgs {
		argsCopy = s.cloneTree(args).([]any)
	}
	held := s.cloneTree(val)
	if !s.spawn(func(ctx context.Context) {
		res, err := s.invoke(ctx, held, path, argsCopy, hasArgs, nil, nil)
		s.releaseTree(held)
		s.releaseTree(argsCopy)
		f.settle(res, err)
	}) {
		s.releaseTree(held)
		s.releaseTree(argsCopy)
		return s.broken(s.closedErr())
	}
	return &Stub{sess: s, imp: &importEntry{intro: 1, handles: 1, fut: f}}
}

// Await waits for a promise's result and returns it; stubs in the result
// belong to the caller. For a stub that is not a promise it returns a new
// handle to the same object. Awaiting asks the peer to send the result
// ("pull"); a promise that is only pipelined on is never pulled.
func (s *Stub) Await(ctx context.Context) (any, error) {
	if s.released.Load() {
		return nil, ErrReleased
	}
	var v any
	if s.imp.fut == nil {
		v = s.Dup()
	} else {
		pv, err := s.pull(ctx)
		if err != nil {
			return nil, err
		}
		v = s.sess.deliver(pv)
	}
	if t := turnOf(ctx); t != nil {
		t.own(v) // what a method's call returned is its call's
	} else if s.owner != nil {
		ownInto(v, func() *releaseScope { return s.owner })
	}
	return v, nil
}

// pull asks the peer for a promise's result and waits for it. The value
// is borrowed.
func (s *Stub) pull(ctx context.Context) (any, error) {
	imp, sess := s.imp, s.sess
	sess.mu.Lock()
	if imp.inTable && !imp.pulled && imp.id > 0 {
		imp.pulled = true
		b := []byte(`["pull",`)
		b = strconv.AppendInt(b, imp.id, 10)
		sess.enqueueLocked(append(b, ']'))
	}
	sess.mu.Unlock()
	sess.flush()
	return imp.fut.wait(ctx)
}

// Call calls the stub itself (a function the peer passed) with args and
// waits for the result.
func (s *Stub) Call(ctx context.Context, args ...any) (any, error) {
	return s.await(ctx, s.pipeline(nil, nonNil(args), true))
}

// CallMethod calls the stub's method name with args and waits for the
// result.
func (s *Stub) CallMethod(ctx context.Context, name string, args ...any) (any, error) {
	return s.await(ctx, s.pipeline([]string{name}, nonNil(args), true))
}

// Get reads the property at path and waits for its value.
func (s *Stub) Get(ctx context.Context, path ...string) (any, error) {
	return s.await(ctx, s.pipeline(path, nil, false))
}

func (s *Stub) await(ctx context.Context, p *Stub) (any, error) {
	defer p.drop()
	return p.Await(ctx)
}

// forward runs a call the peer asked us to make on one of its own stubs.
// The result stays a canonical tree: it goes back to the peer.
func (s *Stub) forward(ctx context.Context, path []string, args []any, hasArgs bool) (any, error) {
	p := s.pipeline(path, args, hasArgs)
	defer p.drop()
	if p.released.Load() {
		return nil, s.sess.asRemote(ErrReleased)
	}
	v, err := p.pull(ctx)
	if err != nil {
		return nil, s.sess.asRemote(err)
	}
	return s.sess.cloneTree(v), nil
}

func nonNil(args []any) []any {
	if args == nil {
		return []any{}
	}
	return args
}

// A method's result takes over the stubs in it; the releases of those
// stubs the method made while it ran wait until then (releaseScope).

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

// pushLocked queues the push frame b and enters the import its result
// will be, with the one handle the caller gets. s.mu is held.
func (s *Session) pushLocked(b []byte) *importEntry {
	id := s.nextImport
	s.nextImport++
	ne := &importEntry{id: id, intro: 1, handles: 1, fut: newFuture(), inTable: true}
	s.imports[id] = ne
	s.enqueueLocked(b)
	return ne
}
