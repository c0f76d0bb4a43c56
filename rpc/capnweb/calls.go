package capnweb

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
)

// pipeRef is a placeholder in an evaluated tree for a path on something
// the peer named by our ID (an exported object, a push result). The
// reference is taken when the frame is read, as JavaScript takes it, so a
// release the peer sends right after cannot pull the object from under a
// call that has not run yet: val holds the base from then on.
type pipeRef struct {
	f     *future  // settles once val is set, when the base was pending; else nil
	val   any      // the base, owned, once captured
	err   error    // the base's failure
	path  []string // what is left to follow from val
	taken atomic.Bool
	t     *tally // pays for the copy of the base
	depth int    // where the placeholder sits in its tree
}

// capture takes a reference to what base settles to, following path
// through plain data at once (the rest of the path may run Go code).
// The copy is paid for by t; when it does not fit, r.err wraps ErrLimit
// and, if the base settled later, the session ends.
func (s *Session) capture(base *future, path []string, t *tally, depth int) *pipeRef {
	r := &pipeRef{}
	s.captureInto(r, base, path, t, depth)
	return r
}

// captureInto is capture into r, which the caller allocated.
func (s *Session) captureInto(r *pipeRef, base *future, path []string, t *tally, depth int) {
	r.path, r.t, r.depth = path, t, depth
	if base.isSettled() {
		r.grab(s, base)
		return
	}
	// Callbacks run in the order they were added: this one before that of
	// any release read after this frame.
	r.f = newFuture()
	base.onDone(func() {
		r.grab(s, base)
		if isLimit(r.err) {
			s.overBudget(r.err)
		}
		r.f.settle(nil, nil)
	})
}

// grab takes the reference once base has settled.
func (r *pipeRef) grab(s *Session, base *future) {
	if base.err != nil {
		r.err = base.err
		return
	}
	v, rest := walkData(base.val, r.path)
	c, err := s.copyTree(r.t, v, r.depth, "a reference to an earlier result")
	if err != nil {
		r.err = err
		return
	}
	r.val, r.path = c, rest
}

func isLimit(err error) bool { return err != nil && errors.Is(err, ErrLimit) }

// take waits until r is captured and returns its base, which the caller
// now owns, and the rest of the path.
func (r *pipeRef) take(ctx context.Context) (any, []string, error) {
	if r.f != nil {
		if _, err := r.f.wait(ctx); err != nil {
			return nil, nil, err
		}
	}
	if !r.taken.CompareAndSwap(false, true) {
		return nil, nil, ErrReleased
	}
	return r.val, r.path, r.err
}

// walkData follows path through arrays and objects, stopping at anything
// else (an object passed by reference, a stub) with the rest of the path.
func walkData(v any, path []string) (any, []string) {
	for i, p := range path {
		switch x := v.(type) {
		case []any:
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 || idx >= len(x) || strconv.Itoa(idx) != p {
				v = Undefined{}
			} else {
				v = x[idx]
			}
		case *Object:
			e, ok := x.Get(p)
			if !ok || reservedKeys[p] {
				e = Undefined{}
			}
			v = e
		case map[string]any:
			e, ok := x[p]
			if !ok || reservedKeys[p] {
				e = Undefined{}
			}
			v = e
		default:
			return v, path[i:]
		}
	}
	return v, nil
}

// hasPending reports whether an evaluated tree holds results still to
// come.
func hasPending(v any) bool {
	switch x := v.(type) {
	case *future, *pipeRef:
		return true
	case []any:
		for _, e := range x {
			if hasPending(e) {
				return true
			}
		}
	case *Object:
		for _, e := range x.vals {
			if hasPending(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasPending(e) {
				return true
			}
		}
	case *RemoteError:
		return hasPending(x.Props) || hasPending(x.Value)
	}
	return false
}

// call is one call started by startCall, with what it holds.
type call struct {
	s           *Session
	t           *tally  // pays for the copies the call makes
	f           *future // the result
	tgt         pipeRef // the target, held since the frame was read
	args        []any
	pendingArgs bool
	turn        ticket // its turn on a Go object, when hasTurn
	hasTurn     bool
	prev, mine  chan struct{} // arrival order on a pending target
}

// startCall starts a call of path on the value base settles to, with the
// evaluated args (owned by the call). The returned future owns the result.
//
// A call on a settled object takes its turn (see concurrency.go) now, in
// arrival order. Calls pipelined on a result that has not settled yet take
// theirs one after the other, in arrival order, once it has. A call whose
// arguments are still to come takes its turn once they have come.
// A target that does not fit the budget t is an error wrapping ErrLimit.
func (s *Session) startCall(base *future, path []string, args []any, onReader bool, t *tally) (*future, error) {
	c := &call{s: s, t: t, f: newFuture(), args: args}
	s.captureInto(&c.tgt, base, path, t, 0)
	if isLimit(c.tgt.err) {
		s.releaseTree(args)
		return nil, c.tgt.err
	}
	if c.tgt.f != nil {
		c.mine = make(chan struct{})
		s.mu.Lock()
		c.prev, base.lastCall = base.lastCall, c.mine
		s.mu.Unlock()
	}
	c.pendingArgs = hasPending(args)
	var quick *method
	if c.tgt.f == nil && c.tgt.err == nil && !c.pendingArgs {
		c.hasTurn = turnFor(&c.turn, c.tgt.val, c.tgt.path)
		if onReader && c.hasTurn && c.turn.isReady() {
			quick = s.quickMethod(c.tgt.val, c.tgt.path, args)
		}
	}
	if !s.start(quick, c.run) {
		c.done()
		s.releaseTree(&c.tgt)
		s.releaseTree(args)
		c.f.settle(nil, s.asRemote(s.closedErr()))
	}
	return c.f, nil
}

// done lets later calls past this one.
func (c *call) done() {
	if c.mine != nil {
		close(c.mine)
		c.mine = nil
	}
	if c.hasTurn {
		c.turn.pass()
	}
}

func (c *call) run(ctx context.Context) {
	res, err := c.invoke(ctx)
	c.done()
	c.f.settle(res, err)
}

func (c *call) fail(err error) (any, error) {
	c.s.releaseTree(&c.tgt)
	c.s.releaseTree(c.args)
	return nil, c.s.asRemote(err)
}

func (c *call) invoke(ctx context.Context) (any, error) {
	s := c.s
	if c.tgt.f != nil {
		if _, err := c.tgt.f.wait(ctx); err != nil {
			return c.fail(err)
		}
		if c.prev != nil {
			select {
			case <-c.prev:
			case <-ctx.Done():
				return c.fail(ctx.Err())
			}
		}
		if c.tgt.err == nil && !c.pendingArgs {
			c.hasTurn = turnFor(&c.turn, c.tgt.val, c.tgt.path)
		}
		if c.hasTurn || c.pendingArgs {
			// The turn is taken, or the call waits for its arguments,
			// which later calls need not wait for.
			close(c.mine)
			c.mine = nil
		}
	}
	av, err := s.awaitTree(ctx, c.args, c.t)
	if err != nil {
		return c.fail(err)
	}
	argv := av.([]any)
	target, path, err := c.tgt.take(ctx)
	if err != nil {
		s.releaseTree(argv)
		return nil, s.asRemote(err)
	}
	if !c.hasTurn {
		c.hasTurn = turnFor(&c.turn, target, path)
	}
	var tk *ticket
	if c.hasTurn {
		tk = &c.turn
	}
	res, err := s.invoke(ctx, target, path, argv, true, tk, c.t)
	// Parameters belong to the call: stubs in them are released now
	// unless the callee duplicated them or returned them.
	s.releaseTree(argv)
	s.releaseTree(target)
	return res, err
}

func (s *Session) closedErr() error {
	if err := s.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// asRemote converts an error into the form a rejection travels in: an
// owned, encodable tree, whoever built it.
func (s *Session) asRemote(err error) error {
	return s.lowerError(err, 0)
}

// invoke follows path from base (borrowed) and, with hasArgs, calls what it
// reaches, on turn tk when it is a Go method. It returns an owned result
// tree or a *RemoteError. t pays for the copies it makes.
func (s *Session) invoke(ctx context.Context, base any, path []string, args []any, hasArgs bool, tk *ticket, t *tally) (any, error) {
	for i := 0; i < len(path); i++ {
		switch x := base.(type) {
		case *localObj:
			rest := path[i:]
			if hasArgs && len(rest) == 1 {
				return s.callLocal(ctx, x, rest[0], false, args, tk, t)
			}
			got, err := x.getMember(ctx, rest[0])
			if err != nil {
				return nil, s.asRemote(err)
			}
			lv, err := s.lower(got, 0)
			if err != nil {
				return nil, s.asRemote(err)
			}
			r, err := s.invoke(ctx, lv, rest[1:], args, hasArgs, nil, t)
			s.releaseTree(lv)
			return r, err
		case *Stub:
			return x.forward(ctx, path[i:], args, hasArgs)
		case []any, *Object, map[string]any:
			base, _ = walkData(base, path[i:i+1])
		case *RemoteError:
			switch path[i] {
			case "name":
				base = x.Name
			case "message":
				base = x.Message
			default:
				v, ok := x.Props[path[i]]
				if !ok {
					v = Undefined{}
				}
				base = v
			}
		default:
			base = Undefined{}
		}
	}
	if hasArgs {
		switch x := base.(type) {
		case *localObj:
			return s.callLocal(ctx, x, "", true, args, tk, t)
		case *Stub:
			return x.forward(ctx, nil, args, true)
		}
		name := ""
		if len(path) > 0 {
			name = path[len(path)-1]
		}
		return nil, s.asRemote(notFunction(name))
	}
	v, err := s.copyTree(t, base, 0, "a property read")
	if err != nil {
		s.overBudget(err)
		return nil, s.asRemote(err)
	}
	return v, nil
}

// callLocal calls method name of o (o itself with self) on turn tk, or on
// a turn of its own, and converts what it returns into a result tree.
// Go code gets its own copy of the arguments, which t pays for while the
// method runs.
func (s *Session) callLocal(ctx context.Context, o *localObj, name string, self bool, args []any, tk *ticket, t *tally) (any, error) {
	if t != nil {
		n, err := s.copySize(t, args, "the arguments of a call")
		if err == nil {
			err = t.m.take(n, "the arguments of a call")
		}
		if err != nil {
			s.overBudget(err)
			return nil, s.asRemote(err)
		}
		defer t.m.give(n)
	}
	if tk == nil {
		tk = &ticket{}
		o.turns.reserveInto(tk)
	}
	defer tk.pass()
	if err := tk.wait(ctx, s.slice); err != nil {
		return nil, s.asRemote(err)
	}
	if hook := s.opts.CallContext; hook != nil {
		ctx, args = hook(ctx, args)
	}
	mctx := s.begin(ctx, tk)
	defer s.finish(tk)
	tk.own(args)
	// A method's parameters convert objects by their types; a dynamic
	// callee gets what an any would.
	ordered := o.target == nil && o.dyn == nil || s.opts.OrderedObjects
	var res any
	var err error
	if self {
		res, err = o.callSelf(mctx, goArgs(args, ordered))
	} else {
		res, err = o.callMember(mctx, name, goArgs(args, ordered))
	}
	if err != nil {
		return nil, s.asRemote(err)
	}
	lv, err := s.lowerAs(res, 0, tk)
	if err != nil {
		return nil, s.asRemote(err)
	}
	return lv, nil
}

// goArgs shows a callee its arguments as Go code receives them: Go
// objects rather than the session's wrappers, and, unless ordered, maps
// for objects.
//
// Their containers are copies: the session shares settled values between
// references, and a method may change what it was given.
func goArgs(args []any, ordered bool) []any {
	for i, a := range args {
		args[i] = detach(a)
	}
	for i, a := range args {
		if u, ch := outward(a, ordered, true); ch {
			out := append([]any(nil), args...)
			out[i] = u
			for j := i + 1; j < len(args); j++ {
				out[j], _ = outward(args[j], ordered, true)
			}
			return out
		}
	}
	return args
}
