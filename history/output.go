package history

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// DefaultOutputCap is the cap NewOutput uses for a cap of zero or less.
const DefaultOutputCap = 1 << 20

// Output collects a run's output under a byte cap, keeping the first half
// of the cap and the last half: the start shows how a run began, the end
// how it failed. Bytes in between are counted, not kept. It is safe for
// concurrent use; each Write is kept whole relative to other Writes.
type Output struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // a ring once len(tail) == tailCap; off is its oldest byte
	off     int
	total   int64
}

// NewOutput returns an Output keeping at most capBytes bytes (plus the
// marker line String adds). capBytes of zero or less means
// DefaultOutputCap.
func NewOutput(capBytes int) *Output {
	if capBytes <= 0 {
		capBytes = DefaultOutputCap
	}
	return &Output{headCap: capBytes / 2, tailCap: capBytes - capBytes/2}
}

// Write keeps p's bytes that fall in the head or the tail. It never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.total += int64(n)
	if k := min(o.headCap-len(o.head), len(p)); k > 0 {
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || o.tailCap == 0 {
		return n, nil
	}
	if len(p) >= o.tailCap {
		if cap(o.tail) < o.tailCap {
			o.tail = make([]byte, o.tailCap)
		}
		o.tail = o.tail[:o.tailCap]
		copy(o.tail, p[len(p)-o.tailCap:])
		o.off = 0
		return n, nil
	}
	if k := min(o.tailCap-len(o.tail), len(p)); k > 0 {
		o.tail = append(o.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(o.tail[o.off:], p)
		p = p[k:]
		o.off = (o.off + k) % o.tailCap
	}
	return n, nil
}

// Truncated reports whether bytes were dropped between head and tail.
func (o *Output) Truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped() > 0
}

// Written returns how many bytes were written in all, kept or not.
func (o *Output) Written() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

func (o *Output) dropped() int64 { return o.total - int64(len(o.head)) - int64(len(o.tail)) }

// String returns the output kept. When bytes were dropped it is the head,
// then "\n… N bytes omitted …\n", then the tail. The cut never splits a
// UTF-8 sequence: a partial one at either edge is dropped and counted in N.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	tail := make([]byte, 0, len(o.tail))
	tail = append(tail, o.tail[o.off:]...)
	tail = append(tail, o.tail[:o.off]...)
	dropped := o.dropped()
	if dropped == 0 {
		return string(o.head) + string(tail)
	}
	head := o.head
	if cut := partialRuneAtEnd(head); cut > 0 {
		head = head[:len(head)-cut]
		dropped += int64(cut)
	}
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
		dropped++
	}
	return fmt.Sprintf("%s\n… %d bytes omitted …\n%s", head, dropped, tail)
}

// partialRuneAtEnd returns how many bytes at the end of b are the start of
// a UTF-8 sequence that the cut left incomplete.
func partialRuneAtEnd(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if c >= utf8.RuneSelf && !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}
