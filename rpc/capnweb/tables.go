package capnweb

import (
	"context"
	"errors"
	"strconv"
)

// Tables: the import and export tables, and what each message does to
// them. Exports are what the peer can name (negative IDs are ours, its
// pushes count up from 1); imports are what we can name of the peer's.

// exportEntry is one row of the export table: something the peer can name.
type exportEntry struct {
	refs   int64
	fut    *future // settles with the value (an object export is settled at once)
	isPush bool
	pulled bool
	sent   bool
	t      tally // what the push holds of the budget, given back on release
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

func (s *Session) handlePush(expr any, frame *tally) error {
	s.mu.Lock()
	s.peerPushes++
	id := s.peerPushes
	s.mu.Unlock()
	// The push holds its frame's values (strings included, which the
	// evaluation shares rather than copies) until the peer releases it.
	e := &exportEntry{refs: 1, isPush: true, t: tally{m: &s.mem}}
	t := &e.t
	if err := t.take(entryCost, "a push"); err != nil {
		return err
	}
	t.takeOver(frame)
	ev := &evaluator{s: s, src: s, onReader: true, t: t}
	val, err := ev.eval(expr, 0)
	if err != nil {
		t.release()
		return err
	}
	_, isCall := val.(*future)
	fresh := isCall || ev.pending
	fut := s.futureOf(val, ev.pending, t)
	e.fut = fut
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		t.release()
		return nil
	}
	s.exports[id] = e
	s.mu.Unlock()
	fut.onDone(func() {
		// What a call returned, or a value whose results came in, is new:
		// it counts while the peer holds it.
		if fresh && fut.err == nil {
			if err := s.charge(t, fut.val, 0, "a call's result"); err != nil {
				s.overBudget(err)
				return
			}
		}
		s.pushSettled(id, e)
	})
	return nil
}

// futureOf turns an evaluated tree into a future: a call's own future, an
// already settled one for plain data, or one settled by a goroutine that
// waits for the placeholders inside.
// t pays for the copies the wait makes.
func (s *Session) futureOf(val any, pending bool, t *tally) *future {
	if f, ok := val.(*future); ok {
		return f
	}
	if !pending {
		return settledFuture(val, nil)
	}
	f := newFuture()
	if !s.spawn(func(ctx context.Context) {
		v, err := s.awaitTree(ctx, val, t)
		f.settle(v, err)
	}) {
		f.settle(nil, s.Err())
	}
	return f
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
	if limit := s.opts.peerMaxMessage(); limit > 0 && len(b) > limit {
		b, _ = frame("reject", s.oversizeLocked(len(b), limit))
	}
	s.enqueueLocked(b)
}

// oversizeLocked is the error a call fails with in place of a reply of
// size bytes, past the peer's limit. s.mu is held.
func (s *Session) oversizeLocked(size, limit int) *RemoteError {
	var err error
	if s.opts.OversizeReply != nil {
		err = s.opts.OversizeReply(size, limit)
	}
	if err == nil {
		err = Errorf(NameRangeError, map[string]any{"size": size, "limit": limit},
			"the reply (%d bytes) is larger than the peer accepts (%d bytes)", size, limit)
	}
	return s.lowerErrorLocked(err)
}

// lowerErrorLocked is lowerError for plain errors, usable with s.mu held:
// it keeps only scalar props, since objects and stubs would need the lock.
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
		for k, v := range ce.Props {
			if !sentProp(k) {
				continue
			}
			switch n := v.(type) {
			case int:
				v = float64(n)
			case int64:
				v = float64(n)
			case string, bool, float64:
			default:
				continue
			}
			if out.Props == nil {
				out.Props = map[string]any{}
			}
			out.Props[k] = v
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
	e.fut.onDone(func() {
		s.releaseTree(e.fut.val)
		e.t.release()
	})
	return nil
}

func (s *Session) handleResolve(id int64, expr any, reject bool, frame *tally) error {
	// What the peer answers counts until Go code has it.
	t := s.newTally()
	t.takeOver(frame)
	ev := &evaluator{s: s, src: s, t: t}
	val, err := ev.eval(expr, 0)
	if err != nil {
		t.release()
		return err
	}
	s.mu.Lock()
	imp := s.imports[id]
	if imp == nil || imp.fut == nil {
		s.mu.Unlock()
		// Not (or no longer) ours to hold: drop it, releasing any stubs.
		s.releaseTree(val)
		t.release()
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
		t.release()
		return nil
	}
	if !s.spawn(func(ctx context.Context) {
		settle(s.awaitTree(ctx, val, t))
		t.release()
	}) {
		imp.fut.settle(nil, s.Err())
		t.release()
	}
	return nil
}

// toRemoteError makes a rejection or abort reason of the value v
// (owned). Its objects become maps unless the session keeps their order,
// as Go code reads them.
//
// It builds a new error: v may be shared with the value the peer named.
func (s *Session) toRemoteError(v any) *RemoteError {
	re, ok := v.(*RemoteError)
	if !ok {
		re = &RemoteError{Value: v}
	} else {
		c := *re
		re = &c
	}
	ordered := s.opts.OrderedObjects
	re.Value, _ = outward(re.Value, ordered, false)
	if re.Props != nil {
		props := make(map[string]any, len(re.Props))
		for k, p := range re.Props {
			props[k], _ = outward(p, ordered, false)
		}
		re.Props = props
	}
	return re
}
