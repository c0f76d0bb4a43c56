package capnweb

import "context"

// Remap: .map() run by this session on what the peer names: the
// instructions evaluated once per element, in their own ID space.

// startRemap starts a .map(): the instructions run for each element of
// the value at path on base (or once for a non-array; null and undefined
// pass through). As in JavaScript, every element's calls start before any
// is awaited, in element order, so elements run concurrently.
//
// t pays for the target's copy and for every element's instructions.
func (s *Session) startRemap(base *future, path []string, captures []*future, instrs []any, t *tally) *future {
	f := newFuture()
	tgt := s.capture(base, path, t, 0)
	releaseCaps := func() {
		for _, c := range captures {
			if st, ok := c.val.(*Stub); ok && c.isSettled() {
				st.drop()
			}
		}
	}
	if !s.spawn(func(ctx context.Context) {
		defer releaseCaps()
		b, rest, err := tgt.take(ctx)
		if err != nil {
			f.settle(nil, s.asRemote(err))
			return
		}
		target, err := s.invoke(ctx, b, rest, nil, false, nil, t)
		s.releaseTree(b)
		if err != nil {
			f.settle(nil, err)
			return
		}
		defer s.releaseTree(target)
		switch x := target.(type) {
		case nil, Undefined:
			f.settle(x, nil)
		case []any:
			if err := t.take(2*sliceBytes+(slotBytes+refBytes)*int64(len(x)), "a .map() over an array"); err != nil {
				s.overBudget(err)
				f.settle(nil, s.asRemote(err))
				return
			}
			runs := make([]*mapRun, len(x))
			for i, el := range x {
				runs[i] = s.startMapper(el, captures, instrs, t)
				if isLimit(runs[i].err) {
					s.overBudget(runs[i].err)
					for _, r := range runs[:i+1] {
						r.finish(ctx, s, false, t)
					}
					f.settle(nil, s.asRemote(runs[i].err))
					return
				}
			}
			out := make([]any, len(x))
			var failed error
			for i, r := range runs {
				v, err := r.finish(ctx, s, failed == nil, t)
				if err != nil && failed == nil {
					failed = err
				}
				out[i] = v
			}
			if failed != nil {
				s.releaseTree(out)
				f.settle(nil, s.asRemote(failed))
				return
			}
			f.settle(out, nil)
		default:
			r := s.startMapper(x, captures, instrs, t)
			if isLimit(r.err) {
				s.overBudget(r.err)
			}
			v, err := r.finish(ctx, s, true, t)
			if err != nil {
				f.settle(nil, s.asRemote(err))
				return
			}
			f.settle(v, nil)
		}
	}) {
		s.releaseTree(tgt)
		// Captured stubs were never handed to a goroutine.
		for _, c := range captures {
			if st, ok := c.val.(*Stub); ok {
				st.drop()
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

// mapRun is the mapper started on one element: its last instruction's
// tree, still to be awaited, or the error that stopped it.
type mapRun struct {
	vars *mapVars
	last any
	err  error
}

// startMapper evaluates the instructions for one element (borrowed)
// without waiting for any call they start: each result is a future that
// later instructions pipeline on.
func (s *Session) startMapper(input any, caps []*future, instrs []any, t *tally) *mapRun {
	r := &mapRun{vars: &mapVars{input: settledFuture(input, nil), caps: caps}, last: Undefined{}}
	for i, in := range instrs {
		ev := &evaluator{s: s, src: r.vars, t: t}
		v, err := ev.eval(in, 0)
		if err != nil {
			r.err = err
			return r
		}
		if i == len(instrs)-1 {
			r.last = v
			break
		}
		r.vars.results = append(r.vars.results, s.futureOf(v, ev.pending, t))
	}
	return r
}

// finish awaits the element's result (with keep; else it only releases)
// and releases the instructions' earlier results.
func (r *mapRun) finish(ctx context.Context, s *Session, keep bool, t *tally) (any, error) {
	defer func() {
		for _, f := range r.vars.results {
			s.releaseTree(f)
		}
	}()
	if r.err != nil || !keep {
		s.releaseTree(r.last)
		return nil, r.err
	}
	v, err := s.awaitTree(ctx, r.last, t)
	if err != nil {
		s.releaseTree(r.last)
		return nil, err
	}
	return v, nil
}
