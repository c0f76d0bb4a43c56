package capnweb

import (
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

	// Lower everything first: arguments and the result may hold Go values.
	caps := make([]any, len(m.caps))
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
		caps[i] = sess.intern(o)
	}
	instrs := make([]any, len(m.instrs))
	for i, in := range m.instrs {
		if m.err != nil {
			break
		}
		if c, ok := in.(mapCall); ok {
			if c.hasArgs {
				la, err := sess.lower(c.args, 0)
				if err != nil {
					m.err = err
					break
				}
				c.args = la.([]any)
			}
			instrs[i] = c
			continue
		}
		lv, err := sess.lower(in, 0)
		if err != nil {
			m.err = err
			break
		}
		instrs[i] = lv
	}
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
		return sess.broken(fmt.Errorf("%w: Map needs a stub or a promise that has not resolved yet", ErrUnsupported))
	}
	b := []byte(`["push",["remap",`)
	b = strconv.AppendInt(b, imp.id, 10)
	b = append(b, ",[],["...)
	var err error
	for i, c := range caps {
		if i > 0 {
			b = append(b, ',')
		}
		switch c := c.(type) {
		case *Stub:
			if c.released.Load() || !c.imp.inTable || c.sess != sess {
				err = fmt.Errorf("%w: captured stub %d is not usable", ErrReleased, i+1)
			} else {
				b = append(b, `["import",`...)
				b = strconv.AppendInt(b, c.imp.id, 10)
				b = append(b, ']')
			}
		case *localObj:
			b, err = sess.encode(b, c, 0)
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
					if b, err = sess.encode(b, a, 1); err != nil {
						break
					}
				}
				b = append(b, ']')
			}
			b = append(b, ']')
			continue
		}
		b, err = sess.encode(b, in, 0)
	}
	if err != nil {
		sess.mu.Unlock()
		return sess.broken(err)
	}
	b = append(b, "]]]"...)
	id := sess.nextImport
	sess.nextImport++
	ne := &importEntry{id: id, intro: 1, handles: 1, fut: newFuture(), inTable: true}
	sess.imports[id] = ne
	sess.enqueueLocked(b)
	sess.mu.Unlock()
	sess.flush()
	return &Stub{sess: sess, imp: ne}
}
