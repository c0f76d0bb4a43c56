package capnweb

import (
	"fmt"
	"math/big"
	"net/url"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Budget: what a peer can make the session hold or build, counted where it
// is made, against Options.MaxMemory.
//
// A peer's frames are small, but what they name need not be: a reference
// to a settled value ("import", "pipeline", a .map() capture) stands for
// that whole value, and every copy of it, every argument list handed to Go
// code and every result sent back is as large as what it names. So the
// session counts the size a value would have if every reference in it
// were spelled out, before it builds it:
//
//   - a frame while it is parsed and evaluated (the JSON's values, the
//     trees built from them, the copies made to resolve its references);
//   - each push result while the peer holds it (the export table), from
//     the frame that made it until the peer releases it;
//   - the arguments of a call to Go code while it runs (Go code gets its
//     own copy of them);
//   - each .map() element's instructions as they are evaluated.
//
// Every charge is checked before the memory is taken, so a frame that
// would take the session past its budget ends it with ErrLimit after at
// most one container's worth of work, and the host never builds the
// amplified value. What is counted is an upper bound: values are shared
// where nothing can change them, so the heap holds less than the count.

// DefaultMaxMemory is the memory budget of a session whose
// Options.MaxMemory is zero.
const DefaultMaxMemory = 64 << 20

// Sizes the budget counts, in bytes. They follow the Go representation
// of each value on a 64-bit platform (an interface slot, a slice or
// string header, a map entry) closely enough that the count stays within
// a small factor of the heap a value really takes.
const (
	slotBytes   = 16  // an interface value in a slice, map or struct
	sliceBytes  = 24  // a slice header
	objectBytes = 64  // an *Object and its two slices' headers
	mapBytes    = 48  // a map header
	entryBytes  = 48  // a map entry beyond its key's bytes
	refBytes    = 64  // a stub, placeholder or future
	errorBytes  = 128 // a *RemoteError before its strings and props
	entryCost   = 256 // a row of the import or export table
)

// meter counts a session's accounted memory against its budget. It is
// safe for concurrent use.
type meter struct {
	max  int64 // <= 0: unbounded
	used atomic.Int64
	peak atomic.Int64
}

// take adds n to what is used if that stays within the budget, and
// otherwise returns an error wrapping ErrLimit saying what asked for it.
func (m *meter) take(n int64, what string) error {
	if n <= 0 {
		return nil
	}
	u := m.used.Add(n)
	if m.max > 0 && u > m.max {
		m.used.Add(-n)
		return budgetErrorf(m.max, "%s needs %s more, beyond the session's memory budget of %s (%s in use)",
			what, byteSize(n), byteSize(m.max), byteSize(u-n))
	}
	for p := m.peak.Load(); u > p && !m.peak.CompareAndSwap(p, u); p = m.peak.Load() {
	}
	return nil
}

// give returns n to the budget.
func (m *meter) give(n int64) {
	if n > 0 {
		m.used.Add(-n)
	}
}

// left is what can still be taken; a large number when unbounded.
func (m *meter) left() int64 {
	if m.max <= 0 {
		return 1 << 62
	}
	return m.max - m.used.Load()
}

// tally is what one owner (a push result, a frame, a call) took from the
// meter; the owner gives it all back when it ends. A nil tally counts
// nothing: Go code's own values are the host's to bound.
type tally struct {
	m *meter
	n atomic.Int64
}

func (s *Session) newTally() *tally { return &tally{m: &s.mem} }

// take charges n to the tally.
func (t *tally) take(n int64, what string) error {
	if t == nil {
		return nil
	}
	if err := t.m.take(n, what); err != nil {
		return err
	}
	t.n.Add(n)
	return nil
}

// left is what the tally may still take.
func (t *tally) left() int64 {
	if t == nil {
		return 1 << 62
	}
	return t.m.left()
}

// takeOver moves what from has taken to t, so that it is given back when
// t is released rather than from.
func (t *tally) takeOver(from *tally) {
	if from != nil && t != nil {
		t.n.Add(from.n.Swap(0))
	}
}

// release gives back everything taken so far; later takes count anew.
func (t *tally) release() {
	if t != nil {
		t.m.give(t.n.Swap(0))
	}
}

// MemoryStats is what a session's budget counts: [Session.Memory].
type MemoryStats struct {
	Used   int64 // bytes counted now
	Peak   int64 // the most counted at once
	Budget int64 // Options.MaxMemory in effect; <= 0 for no limit
}

// Memory reports the session's accounted memory.
func (s *Session) Memory() MemoryStats {
	return MemoryStats{Used: s.mem.used.Load(), Peak: s.mem.peak.Load(), Budget: s.mem.max}
}

// treeSize is the size v would have with every shared part spelled out,
// or a number above limit as soon as it exceeds limit: measuring costs at
// most limit/slotBytes steps, whatever v names. depth is v's own depth;
// a tree nested deeper than maxDepth counts as over the limit, since
// walking it could exhaust the stack.
func treeSize(v any, limit int64, depth, maxDepth int) int64 {
	n, _ := measure(v, limit, depth, maxDepth, true)
	return n
}

// measure is treeSize, and reports whether v is plain: data with nothing
// in it that counts references or that code may change (stubs, objects
// passed by reference, placeholders, errors, bytes, URLs). A settled
// plain value is never changed by anyone, so it can be shared rather than
// copied.
//
// Without spelled, strings and bytes count only their slot: that is what a
// copy of v's containers takes, which shares them.
func measure(v any, limit int64, depth, maxDepth int, spelled bool) (int64, bool) {
	if depth > maxDepth {
		return limit + 1, false
	}
	plain := true
	sub := func(e any, limit int64) int64 {
		n, p := measure(e, limit, depth+1, maxDepth, spelled)
		plain = plain && p
		return n
	}
	n := int64(slotBytes)
	switch x := v.(type) {
	case string:
		if spelled {
			n += int64(len(x))
		}
	case []any:
		n += sliceBytes
		for _, e := range x {
			if n > limit {
				return n, false
			}
			n += sub(e, limit-n)
		}
	case *Object:
		n += objectBytes
		for i, e := range x.vals {
			if n > limit {
				return n, false
			}
			n += int64(len(x.keys[i])) + sub(e, limit-n)
		}
	case map[string]any:
		n += mapBytes
		for k, e := range x {
			if n > limit {
				return n, false
			}
			n += entryBytes + int64(len(k)) + sub(e, limit-n)
		}
	case []byte:
		n += sliceBytes + int64(len(x))
		plain = false
	case TypedBytes:
		n += sliceBytes + int64(len(x.Type)+len(x.Data))
		plain = false
	case *big.Int:
		n += sliceBytes + int64(len(x.Bits()))*8
		plain = false
	case *url.URL:
		plain = false
		n += refBytes + int64(len(x.Scheme)+len(x.Host)+len(x.Path)+len(x.RawQuery)+len(x.Fragment)+len(x.Opaque))
	case Headers:
		plain = false
		n += sliceBytes
		for _, h := range x {
			n += 2*slotBytes + int64(len(h[0])+len(h[1]))
		}
	case *RemoteError:
		n += errorBytes + int64(len(x.Name)+len(x.Message)+len(x.Stack))
		plain = false
		if x.Props != nil && n <= limit {
			n += sub(x.Props, limit-n)
		}
		if x.Value != nil && n <= limit {
			n += sub(x.Value, limit-n)
		}
	case *Stub, *future, *pipeRef, *localObj:
		n += refBytes
		plain = false
	case float64, time.Time:
		n += 8
	}
	return n, plain
}

// size measures v for t: its size, or an error wrapping ErrLimit when it
// does not fit what t may still take.
func (s *Session) size(t *tally, v any, depth int, what string) (int64, error) {
	if t == nil {
		return 0, nil
	}
	left := t.left()
	n := treeSize(v, left, depth, s.opts.maxDepth()+depth)
	if n > left {
		return 0, wouldExceed(what, left, t.m.max)
	}
	return n, nil
}

// copySize is what a copy of v's containers takes (strings and bytes
// are shared), or an error wrapping ErrLimit when it does not fit t.
func (s *Session) copySize(t *tally, v any, what string) (int64, error) {
	left := t.left()
	n, _ := measure(v, left, 0, s.opts.maxDepth(), false)
	if n > left {
		return 0, wouldExceed(what, left, t.m.max)
	}
	return n, nil
}

// charge measures v and takes its size from t.
func (s *Session) charge(t *tally, v any, depth int, what string) error {
	n, err := s.size(t, v, depth, what)
	if err != nil {
		return err
	}
	return t.take(n, what)
}

// copyTree is cloneTree for a copy t pays for: nothing is copied unless
// its whole size fits.
//
// A plain value is shared instead: it is settled, nothing changes it (the
// session only fills in placeholders, which a settled value has none of,
// and Go code gets copies, goArgs), so every reference to it may be the
// same memory. It still counts in full, since sending it or handing it to
// Go code spells it out.
func (s *Session) copyTree(t *tally, v any, depth int, what string) (any, error) {
	left := t.left()
	n, plain := measure(v, left, depth, s.opts.maxDepth()+depth, true)
	if t != nil {
		if n > left {
			return nil, budgetErrorf(t.m.max, "%s would take more than the %s left of the session's memory budget of %s",
				what, byteSize(max(left, 0)), byteSize(t.m.max))
		}
		if err := t.take(n, what); err != nil {
			return nil, err
		}
	}
	if plain {
		return v, nil
	}
	return s.cloneTree(v), nil
}

// overBudget ends the session for a charge that failed off the reader.
func (s *Session) overBudget(err error) {
	s.end(&AbortError{Cause: err}, err, true)
}

// recoverPeer turns a panic while handling the peer's input into the end
// of this session only: the host process and every other session go on.
// It is deferred by every goroutine that handles what the peer sent.
func (s *Session) recoverPeer() {
	if r := recover(); r != nil {
		err := s.peerPanic(r)
		s.end(&AbortError{Cause: err}, err, true)
	}
}

// peerPanic reports a recovered panic to Options.OnPanic and returns the
// error the session ends with. The peer hears only "internal error".
func (s *Session) peerPanic(r any) error {
	if s.opts.OnPanic != nil {
		s.opts.OnPanic(r, debug.Stack())
	}
	return &Error{Message: "internal error", Err: fmt.Errorf("%w: panic handling the peer's message: %v", ErrProtocol, r)}
}

// byteSize writes n bytes for a person: "64 MiB", "1.5 KiB", "12 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	case n >= 1<<10:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// wouldExceed is the error for what, which does not fit the left bytes
// of the budget.
func wouldExceed(what string, left, budget int64) error {
	return budgetErrorf(budget, "%s would take more than the %s left of the session's memory budget of %s",
		what, byteSize(max(left, 0)), byteSize(budget))
}
