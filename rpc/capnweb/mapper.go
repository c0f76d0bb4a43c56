package capnweb

import (
	"context"
	"fmt"
	"strconv"
)

// Mapper records the instructions of a .map() for [Stub.Map]. The mapper
// function does not run in Go for each element: like JavaScript's
// promise.map(fn), it runs once, up front, against placeholders, and the
// calls it makes on them are sent to the peer, which replays them for
// every element.
type Mapper struct {
	caps   []any // *Stub (the peer's) or *localObj (ours), in capture order
	instrs []any // mapCall or the final value tree
	err    error
}

// MapValue is a placeholder inside a map: the element, a capture, or the
// result of a call recorded earlier. Put it in arguments or in the value
// the mapper returns.
type MapValue struct {
	m  *Mapper
	id int64
}

// mapCall is one recorded call or property read.
type mapCall struct {
	target  int64
	path    []string
	args    []any
	hasArgs bool
}

// Capture makes v usable inside the map: a *Stub of the peer's (its main
// object, say) or a Go object passed by reference.
func (m *Mapper) Capture(v any) MapValue {
	m.caps = append(m.caps, v)
	return MapValue{m: m, id: -int64(len(m.caps))}
}

func (m *Mapper) record(c mapCall) MapValue {
	m.instrs = append(m.instrs, c)
	return MapValue{m: m, id: int64(len(m.instrs))}
}

// Call records a call of the placeholder itself (a function).
func (v MapValue) Call(args ...any) MapValue {
	return v.m.record(mapCall{target: v.id, args: nonNil(args), hasArgs: true})
}

// CallMethod records a call of method name on the placeholder.
func (v MapValue) CallMethod(name string, args ...any) MapValue {
	return v.m.record(mapCall{target: v.id, path: []string{name}, args: nonNil(args), hasArgs: true})
}

// Get records a property read on the placeholder.
func (v MapValue) Get(path ...string) MapValue {
	return v.m.record(mapCall{target: v.id, path: path})
}

// Map asks the peer to apply fn to each element of the array s resolves
// to (or once to a non-array value; null and undefined pass through), and
// returns the promise of the mapped result, as JavaScript's
// promise.map(fn) does. fn receives the element placeholder and returns
// the per-element result, which may hold placeholders in slices and maps.
// Only calls on placeholders travel: Go code in fn runs once, here.
func (s *Stub) Map(fn func(m *Mapper, elem MapValue) any) *Stub {
	sess := s.sess
	if s.released.Load() {
		return sess.broken(ErrReleased)
	}
	m := &Mapper{}
	result := fn(m, MapValue{m: m, id: 0})
	m.instrs = append(m.instrs, result)

	caps, instrs := sess.lowerMap(m)
	defer func() {
		for _, in := range instrs {
			if c, ok := in.(mapCall); ok {
				sess.releaseTree(c.args)
			} else {
				sess.releaseTree(in)
			}
		}
	}()
	if m.err != nil {
		return sess.broken(m.err)
	}

	sess.mu.Lock()
	imp := s.imp
	if sess.ended || !imp.inTable {
		sess.mu.Unlock()
		if sess.ended {
			return sess.broken(sess.closedErr())
		}
		if imp.fut == nil || !imp.fut.isSettled() {
			return sess.broken(fmt.Errorf("%w: Map needs a stub or a promise that has not been released", ErrReleased))
		}
		if imp.fut.err != nil {
			return sess.broken(imp.fut.err)
		}
		// Resolved already: replay the instructions here, as JavaScript
		// maps a resolved promise locally.
		p := sess.mapLocal(imp.fut.val, caps, instrs)
		p.owner = s.owner // not shared yet
		return p
	}
	b, err := sess.appendRemap(imp.id, caps, instrs)
	if err != nil {
		sess.mu.Unlock()
		return sess.broken(err)
	}
	ne := sess.pushLocked(b)
	sess.mu.Unlock()
	sess.flush()
	return &Stub{sess: sess, imp: ne, owner: s.owner}
}

// lowerMap lowers what fn recorded, its captures and instructions, since
// arguments and the result may hold Go values. A failure is left in m.err.
func (s *Session) lowerMap(m *Mapper) (caps, instrs []any) {
	caps = make([]any, len(m.caps))
	for i, c := range m.caps {
		if st, ok := c.(*Stub); ok {
			caps[i] = st
			continue
		}
		o := newLocalObj(c)
		if o == nil {
			m.err = fmt.Errorf("%w: capture %d (%T) is not a stub or object passed by reference", ErrUnsupported, i+1, c)
			break
		}
		caps[i] = s.intern(o)
	}
	instrs = make([]any, len(m.instrs))
	for i, in := range m.instrs {
		if m.err != nil {
			break
		}
		if c, ok := in.(mapCall); ok {
			if c.hasArgs {
				la, err := s.lower(c.args, 0)
				if err != nil {
					m.err = err
					break
				}
				c.args = la.([]any)
			}
			instrs[i] = c
			continue
		}
		lv, err := s.lower(in, 0)
		if err != nil {
			m.err = err
			break
		}
		instrs[i] = lv
	}
	return caps, instrs
}

// appendRemap writes the push of a remap of import id with caps and
// instrs, lowered. s.mu is held.
func (s *Session) appendRemap(id int64, caps, instrs []any) ([]byte, error) {
	b := []byte(`["push",["remap",`)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ",[],["...)
	var err error
	for i, c := range caps {
		if i > 0 {
			b = append(b, ',')
		}
		switch c := c.(type) {
		case *Stub:
			if c.released.Load() || !c.imp.inTable || c.sess != s {
				err = fmt.Errorf("%w: captured stub %d is not usable", ErrReleased, i+1)
			} else {
				b = append(b, `["import",`...)
				b = strconv.AppendInt(b, c.imp.id, 10)
				b = append(b, ']')
			}
		case *localObj:
			b, err = s.encode(b, c, 0)
		}
		if err != nil {
			break
		}
	}
	b = append(b, "],["...)
	for i, in := range instrs {
		if err != nil {
			break
		}
		if i > 0 {
			b = append(b, ',')
		}
		if c, ok := in.(mapCall); ok {
			b = append(b, `["pipeline",`...)
			b = strconv.AppendInt(b, c.target, 10)
			b = append(b, ",["...)
			for j, p := range c.path {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSString(b, p)
			}
			b = append(b, ']')
			if c.hasArgs {
				b = append(b, ",["...)
				for j, a := range c.args {
					if j > 0 {
						b = append(b, ',')
					}
					if b, err = s.encode(b, a, 1); err != nil {
						break
					}
				}
				b = append(b, ']')
			}
			b = append(b, ']')
			continue
		}
		b, err = s.encode(b, in, 0)
	}
	if err != nil {
		return nil, err
	}
	return append(b, "]]]"...), nil
}

// mapLocal applies recorded map instructions to val (borrowed), a value
// that has already arrived: each call goes where its target lives (to the
// peer for its stubs, here for plain data and Go objects), and the
// per-element results are awaited together, as the peer would.
func (s *Session) mapLocal(val any, caps []any, instrs []any) *Stub {
	held := s.cloneTree(val)
	capsHeld := s.cloneTree(caps).([]any)
	instrsHeld := make([]any, len(instrs))
	for i, in := range instrs {
		if c, ok := in.(mapCall); ok {
			c.args = s.cloneTree(c.args).([]any)
			instrsHeld[i] = c
		} else {
			instrsHeld[i] = s.cloneTree(in)
		}
	}
	f := newFuture()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return s.broken(s.closedErr())
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() {
			s.releaseTree(held)
			s.releaseTree(capsHeld)
			for _, in := range instrsHeld {
				if c, ok := in.(mapCall); ok {
					s.releaseTree(c.args)
				} else {
					s.releaseTree(in)
				}
			}
		}()
		switch x := held.(type) {
		case nil, Undefined:
			f.settle(x, nil)
		case []any:
			started := make([]*localVars, len(x))
			for i, el := range x {
				started[i] = s.startLocalMapper(el, capsHeld, instrsHeld)
			}
			out := make([]any, len(x))
			var failed error
			for i, r := range started {
				v, err := s.finishLocalMapper(s.ctx, r, instrsHeld)
				if err != nil && failed == nil {
					failed = err
				}
				out[i] = v
			}
			if failed != nil {
				s.releaseTree(out)
				f.settle(nil, failed)
				return
			}
			f.settle(out, nil)
		default:
			r := s.startLocalMapper(x, capsHeld, instrsHeld)
			v, err := s.finishLocalMapper(s.ctx, r, instrsHeld)
			f.settle(v, err)
		}
	}()
	return &Stub{sess: s, imp: &importEntry{intro: 1, handles: 1, fut: f}}
}

// localVars is the private ID space of map instructions replayed here
// (see mapVars): the element, the captures, earlier results.
type localVars struct {
	el      any
	caps    []any
	results []*Stub
}

func (v *localVars) get(id int64) any {
	switch {
	case id == 0:
		return v.el
	case id < 0 && -id <= int64(len(v.caps)):
		return v.caps[-id-1]
	case id > 0 && id <= int64(len(v.results)):
		return v.results[id-1]
	}
	return Undefined{}
}

// startLocalMapper starts the recorded calls for one element: each goes
// where its target lives, pipelined on the results before it.
func (s *Session) startLocalMapper(el any, caps, instrs []any) *localVars {
	vars := &localVars{el: el, caps: caps}
	for _, in := range instrs[:len(instrs)-1] {
		c := in.(mapCall)
		args := asList(substMapValues(c.args, vars.get))
		vars.results = append(vars.results, s.localPipeline(vars.get(c.target), c.path, args, c.hasArgs))
	}
	return vars
}

// finishLocalMapper builds the element's result from the last
// instruction, awaiting the promises in it, and releases the promises.
func (s *Session) finishLocalMapper(ctx context.Context, vars *localVars, instrs []any) (any, error) {
	defer func() {
		for _, r := range vars.results {
			r.drop()
		}
	}()
	tree := s.cloneTree(substMapValues(instrs[len(instrs)-1], vars.get))
	out, err := s.awaitPromises(ctx, tree)
	if err != nil {
		s.releaseTree(tree)
		return nil, err
	}
	return out, nil
}

// awaitPromises replaces the promise stubs in an owned tree by their
// results.
func (s *Session) awaitPromises(ctx context.Context, v any) (any, error) {
	switch x := v.(type) {
	case *Stub:
		if !x.IsPromise() {
			return x, nil
		}
		defer x.drop()
		r, err := x.pull(ctx)
		if err != nil {
			return nil, err
		}
		return s.cloneTree(r), nil
	case []any:
		for i := range x {
			r, err := s.awaitPromises(ctx, x[i])
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	case *Object:
		for i := range x.vals {
			r, err := s.awaitPromises(ctx, x.vals[i])
			if err != nil {
				return nil, err
			}
			x.vals[i] = r
		}
	}
	return v, nil
}

// substMapValues replaces the placeholders in a lowered tree (borrowed)
// by what vars names, copying the containers.
func substMapValues(v any, vars func(int64) any) any {
	switch x := v.(type) {
	case MapValue:
		return vars(x.id)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substMapValues(e, vars)
		}
		return out
	case *Object:
		out := &Object{keys: append([]string(nil), x.keys...), vals: make([]any, len(x.vals)), nidx: x.nidx}
		for i, e := range x.vals {
			out.vals[i] = substMapValues(e, vars)
		}
		return out
	}
	return v
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
