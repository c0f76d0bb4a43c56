package capnweb

import (
	"context"
	"net/url"
	"strconv"
)

// startCall starts a call of path on the value base settles to, with the
// evaluated args (owned by the call). The returned future owns the result.
//
// Calls pipelined on a result that has not settled yet run one after the
// other, in arrival order, once it settles: that keeps the order a script
// sees for promise.a(); promise.b(). Calls on settled targets run
// concurrently.
func (s *Session) startCall(base *future, path []string, args []any, onReader bool) *future {
	f := newFuture()
	var prev, mine chan struct{}
	if !base.isSettled() {
		mine = make(chan struct{})
		s.mu.Lock()
		prev, base.lastCall = base.lastCall, mine
		s.mu.Unlock()
	}
	var quick *method
	if onReader && mine == nil {
		quick = s.quickMethod(base, path, args)
	}
	if !s.start(quick, func(ctx context.Context) {
		if mine != nil {
			defer close(mine)
		}
		av, err := s.awaitTree(ctx, args)
		if err != nil {
			s.releaseTree(args)
			f.settle(nil, s.asRemote(err))
			return
		}
		argv := av.([]any)
		target, err := base.wait(ctx)
		if err == nil && prev != nil {
			select {
			case <-prev:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		if err != nil {
			s.releaseTree(argv)
			f.settle(nil, s.asRemote(err))
			return
		}
		res, err := s.invoke(ctx, target, path, argv, true)
		// Parameters belong to the call: stubs in them are released now
		// unless the callee duplicated them.
		s.releaseTree(argv)
		f.settle(res, err)
	}) {
		if mine != nil {
			close(mine)
		}
		s.releaseTree(args)
		f.settle(nil, s.asRemote(s.closedErr()))
	}
	return f
}

func (s *Session) closedErr() error {
	if err := s.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// asRemote converts an error into the form a rejection travels in.
func (s *Session) asRemote(err error) error {
	if _, ok := err.(*RemoteError); ok {
		return err
	}
	return s.lowerError(err, 0)
}

// invoke follows path from base (borrowed) and, with hasArgs, calls what it
// reaches. It returns an owned result tree or a *RemoteError.
func (s *Session) invoke(ctx context.Context, base any, path []string, args []any, hasArgs bool) (any, error) {
	for i := 0; i < len(path); i++ {
		switch x := base.(type) {
		case *localObj:
			rest := path[i:]
			if hasArgs && len(rest) == 1 {
				res, err := x.callMember(ctx, rest[0], unwrapList(args))
				return s.lowerResult(res, err)
			}
			got, err := x.getMember(ctx, rest[0])
			if err != nil {
				return nil, s.asRemote(err)
			}
			lv, err := s.lower(got, 0)
			if err != nil {
				return nil, s.asRemote(err)
			}
			r, err := s.invoke(ctx, lv, rest[1:], args, hasArgs)
			s.releaseTree(lv)
			return r, err
		case *Stub:
			return x.forward(ctx, path[i:], args, hasArgs)
		case []any:
			idx, err := strconv.Atoi(path[i])
			if err != nil || idx < 0 || idx >= len(x) || strconv.Itoa(idx) != path[i] {
				base = Undefined{}
			} else {
				base = x[idx]
			}
		case map[string]any:
			v, ok := x[path[i]]
			if !ok || reservedKeys[path[i]] {
				v = Undefined{}
			}
			base = v
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
			res, err := x.callSelf(ctx, unwrapList(args))
			return s.lowerResult(res, err)
		case *Stub:
			return x.forward(ctx, nil, args, true)
		}
		name := ""
		if len(path) > 0 {
			name = path[len(path)-1]
		}
		return nil, s.asRemote(notFunction(name))
	}
	return s.cloneTree(base), nil
}

// lowerResult converts what a Go method returned into a result tree.
func (s *Session) lowerResult(res any, err error) (any, error) {
	if err != nil {
		return nil, s.asRemote(err)
	}
	lv, err := s.lower(res, 0)
	if err != nil {
		return nil, s.asRemote(err)
	}
	return lv, nil
}

// awaitTree replaces the placeholders in v (owned) by their values and
// returns the resulting owned tree. On error v is left consistent (each
// element either resolved or still a placeholder) for releaseTree.
func (s *Session) awaitTree(ctx context.Context, v any) (any, error) {
	switch x := v.(type) {
	case *future:
		return x.wait(ctx)
	case *pipeRef:
		base, err := x.f.wait(ctx)
		if err != nil {
			return nil, err
		}
		return s.invoke(ctx, base, x.path, nil, false)
	case []any:
		for i := range x {
			r, err := s.awaitTree(ctx, x[i])
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	case map[string]any:
		for k, e := range x {
			r, err := s.awaitTree(ctx, e)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	case *RemoteError:
		if x.Props != nil {
			if _, err := s.awaitTree(ctx, x.Props); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// releaseTree drops every reference v owns: stub handles, object holds and
// the results of placeholders.
func (s *Session) releaseTree(v any) {
	switch x := v.(type) {
	case *Stub:
		x.Release()
	case *localObj:
		s.unhold(x)
	case *future:
		x.onDone(func() { s.releaseTree(x.val) })
	case []any:
		for _, e := range x {
			s.releaseTree(e)
		}
	case map[string]any:
		for _, e := range x {
			s.releaseTree(e)
		}
	case *RemoteError:
		s.releaseTree(x.Props)
		s.releaseTree(x.Value)
	}
}

// cloneTree copies a settled tree, taking new references to what it holds.
func (s *Session) cloneTree(v any) any {
	switch x := v.(type) {
	case *Stub:
		return x.Dup()
	case *localObj:
		s.hold(x)
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.cloneTree(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = s.cloneTree(e)
		}
		return out
	case *RemoteError:
		c := *x
		if x.Props != nil {
			c.Props = s.cloneTree(x.Props).(map[string]any)
		}
		c.Value = s.cloneTree(x.Value)
		return &c
	case []byte:
		return append([]byte(nil), x...)
	case *url.URL:
		c := *x
		return &c
	}
	return v
}

// unwrapList shows a dynamic callee (Target, Func) its Go objects rather
// than the session's wrappers.
func unwrapList(args []any) []any {
	u, _ := unwrap(args)
	return u.([]any)
}

// unwrap replaces *localObj wrappers by the Go values they wrap, copying
// only the containers that change.
func unwrap(v any) (any, bool) {
	switch x := v.(type) {
	case *localObj:
		return x.val.Interface(), true
	case []any:
		var out []any
		for i, e := range x {
			if u, ch := unwrap(e); ch {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = u
			}
		}
		if out != nil {
			return out, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if u, ch := unwrap(e); ch {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = u
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// hold records one more reference to o.
func (s *Session) hold(o *localObj) {
	s.objMu.Lock()
	o.holds++
	if !o.disposed {
		s.objs[o] = struct{}{}
	}
	s.objMu.Unlock()
}

// unhold drops a reference to o and disposes it at zero.
func (s *Session) unhold(o *localObj) {
	s.objMu.Lock()
	o.holds--
	if o.holds > 0 || o.disposed {
		s.objMu.Unlock()
		return
	}
	o.disposed = true
	delete(s.objs, o)
	if o.key != nil && s.byKey[o.key] == o {
		delete(s.byKey, o.key)
	}
	s.objMu.Unlock()
	o.dispose()
}

// intern returns the session's wrapper for the same Go object, so that
// every reference to one object counts toward one Dispose.
func (s *Session) intern(o *localObj) *localObj {
	if o.key == nil {
		return o
	}
	s.objMu.Lock()
	defer s.objMu.Unlock()
	if old := s.byKey[o.key]; old != nil && !old.disposed {
		return old
	}
	s.byKey[o.key] = o
	return o
}

// startRemap starts a .map(): the instructions run for each element of
// the value at path on base (or once for a non-array; null and undefined
// pass through).
func (s *Session) startRemap(base *future, path []string, captures []*future, instrs []any) *future {
	f := newFuture()
	releaseCaps := func() {
		for _, c := range captures {
			if st, ok := c.val.(*Stub); ok && c.isSettled() {
				st.Release()
			}
		}
	}
	if !s.spawn(func(ctx context.Context) {
		defer releaseCaps()
		b, err := base.wait(ctx)
		if err != nil {
			f.settle(nil, s.asRemote(err))
			return
		}
		target, err := s.invoke(ctx, b, path, nil, false)
		if err != nil {
			f.settle(nil, err)
			return
		}
		defer s.releaseTree(target)
		switch x := target.(type) {
		case nil, Undefined:
			f.settle(x, nil)
		case []any:
			out := make([]any, len(x))
			for i, el := range x {
				r, err := s.runMapper(ctx, el, captures, instrs)
				if err != nil {
					s.releaseTree(out[:i])
					f.settle(nil, s.asRemote(err))
					return
				}
				out[i] = r
			}
			f.settle(out, nil)
		default:
			r, err := s.runMapper(ctx, x, captures, instrs)
			if err != nil {
				f.settle(nil, s.asRemote(err))
				return
			}
			f.settle(r, nil)
		}
	}) {
		// Captured stubs were never handed to a goroutine.
		for _, c := range captures {
			if st, ok := c.val.(*Stub); ok {
				st.Release()
			}
		}
		f.settle(nil, s.asRemote(s.closedErr()))
	}
	return f
}

// mapVars is the private ID space of map instructions: 0 is the input,
// -1, -2, … the captures, 1, 2, … earlier instruction results.
type mapVars struct {
	input   *future
	caps    []*future
	results []*future
}

func (m *mapVars) ref(id int64) (*future, error) {
	switch {
	case id == 0:
		return m.input, nil
	case id < 0 && -id <= int64(len(m.caps)):
		return m.caps[-id-1], nil
	case id > 0 && id <= int64(len(m.results)):
		return m.results[id-1], nil
	}
	return nil, protoErrorf("map instruction refers to unknown variable %d", id)
}

func (m *mapVars) peer(id int64, _ bool) (any, error) {
	return nil, protoErrorf("map instructions must not introduce stubs or promises (ID %d)", id)
}

func (s *Session) runMapper(ctx context.Context, input any, caps []*future, instrs []any) (any, error) {
	vars := &mapVars{input: settledFuture(input, nil), caps: caps}
	defer func() {
		for i, r := range vars.results {
			if i < len(vars.results)-1 {
				s.releaseTree(r.val)
			}
		}
	}()
	if len(instrs) == 0 {
		return Undefined{}, nil
	}
	for _, in := range instrs {
		ev := &evaluator{s: s, src: vars}
		t, err := ev.eval(in, 0)
		if err != nil {
			return nil, err
		}
		r, err := s.awaitTree(ctx, t)
		if err != nil {
			s.releaseTree(t)
			return nil, err
		}
		vars.results = append(vars.results, settledFuture(r, nil))
	}
	return vars.results[len(vars.results)-1].val, nil
}
