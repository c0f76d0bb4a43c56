package capnweb

import (
	"context"
	"net/url"
)

// Trees: the value trees a session evaluates, awaits, copies, shares and
// releases, and the references to Go objects they hold.

// detach copies v's arrays, objects and maps, sharing everything else.
func detach(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = detach(e)
		}
		return out
	case *Object:
		out := &Object{keys: append([]string(nil), x.keys...), vals: make([]any, len(x.vals)), nidx: x.nidx}
		for i, e := range x.vals {
			out.vals[i] = detach(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = detach(e)
		}
		return out
	}
	return v
}

// awaitTree replaces the placeholders in v (owned) by their values and
// returns the resulting owned tree. On error v is left consistent (each
// element either resolved or still a placeholder) for releaseTree.
func (s *Session) awaitTree(ctx context.Context, v any, t *tally) (any, error) {
	switch x := v.(type) {
	case *future:
		return x.wait(ctx)
	case *pipeRef:
		base, path, err := x.take(ctx)
		if err != nil {
			return nil, err
		}
		if len(path) == 0 {
			return base, nil
		}
		r, err := s.invoke(ctx, base, path, nil, false, nil, t)
		s.releaseTree(base)
		return r, err
	case []any:
		for i := range x {
			r, err := s.awaitTree(ctx, x[i], t)
			if err != nil {
				return nil, err
			}
			if placeholder(x[i]) {
				x[i] = r
			}
		}
	case *Object:
		for i := range x.vals {
			r, err := s.awaitTree(ctx, x.vals[i], t)
			if err != nil {
				return nil, err
			}
			if placeholder(x.vals[i]) {
				x.vals[i] = r
			}
		}
	case map[string]any:
		for k, e := range x {
			r, err := s.awaitTree(ctx, e, t)
			if err != nil {
				return nil, err
			}
			if placeholder(e) {
				x[k] = r
			}
		}
	case *RemoteError:
		if x.Props != nil {
			if _, err := s.awaitTree(ctx, x.Props, t); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// placeholder reports whether v stands for a result still to come. Only
// those are written over when a tree is awaited: a container is filled in
// where it is, so a settled value shared into the tree is only ever read.
func placeholder(v any) bool {
	switch v.(type) {
	case *future, *pipeRef:
		return true
	}
	return false
}

// releaseTree drops every reference v owns: stub handles, object holds and
// the results of placeholders.
func (s *Session) releaseTree(v any) {
	switch x := v.(type) {
	case *Stub:
		x.drop()
	case *localObj:
		s.unhold(x)
	case *future:
		x.onDone(func() { s.releaseTree(x.val) })
	case *pipeRef:
		release := func() {
			if x.taken.CompareAndSwap(false, true) {
				s.releaseTree(x.val)
			}
		}
		if x.f != nil {
			x.f.onDone(release)
		} else {
			release()
		}
	case []any:
		for _, e := range x {
			s.releaseTree(e)
		}
	case *Object:
		for _, e := range x.vals {
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
	case *Object:
		out := &Object{keys: append([]string(nil), x.keys...), vals: make([]any, len(x.vals)), nidx: x.nidx}
		for i, e := range x.vals {
			out.vals[i] = s.cloneTree(e)
		}
		out.indexKeys()
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

// deliver copies a settled tree (borrowed) for Go code: stubs are new
// handles the caller owns, objects passed by reference are the Go values
// they wrap, and objects are maps unless the session keeps their order.
func (s *Session) deliver(v any) any {
	switch x := v.(type) {
	case *localObj:
		return x.val.Interface()
	case *Object:
		if !s.opts.OrderedObjects {
			m := make(map[string]any, len(x.keys))
			for i, k := range x.keys {
				m[k] = s.deliver(x.vals[i])
			}
			return m
		}
		out := &Object{keys: append([]string(nil), x.keys...), vals: make([]any, len(x.vals)), nidx: x.nidx}
		for i, e := range x.vals {
			out.vals[i] = s.deliver(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.deliver(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = s.deliver(e)
		}
		return out
	case *RemoteError:
		c := *x
		if x.Props != nil {
			c.Props = s.deliver(x.Props).(map[string]any)
		}
		c.Value = s.deliver(x.Value)
		return &c
	}
	return s.cloneTree(v)
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
