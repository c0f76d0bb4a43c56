package runner

import (
	"slices"
	"sync"
)

// startLine is a counting semaphore over the runs' slots that admits the
// runs waiting in the order they were started (their seq, from Start),
// not the order they came to wait: runs are ready to wait (read,
// approved, their modules checked) in whatever order those steps end, and
// a run slow to get ready must not lose its turn to one started after it
// that was quicker. A run not yet waiting holds nobody back.
type startLine struct {
	mu      sync.Mutex
	free    int
	waiters []place // by seq
}

// place is a run's place in line: closed when it gets its slot.
type place struct {
	seq uint64
	ch  chan struct{}
}

func (q *startLine) init(n int) { q.free = n }

// acquire waits for a slot for the run started seq-th; it returns false
// if cancel closes first.
func (q *startLine) acquire(seq uint64, cancel <-chan struct{}) bool {
	return q.wait(q.enter(seq), cancel)
}

// enter takes the run's place in line and returns the channel closed when
// the place gets a slot (at once, if one is free and nobody waits).
func (q *startLine) enter(seq uint64) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := make(chan struct{})
	if q.free > 0 && len(q.waiters) == 0 {
		q.free--
		close(ch)
		return ch
	}
	i, _ := slices.BinarySearchFunc(q.waiters, seq, func(p place, s uint64) int {
		switch {
		case p.seq < s:
			return -1
		case p.seq > s:
			return 1
		}
		return 0
	})
	q.waiters = slices.Insert(q.waiters, i, place{seq: seq, ch: ch})
	return ch
}

// wait waits for the place ch to get its slot; it returns false, giving up
// the place, if cancel closes first.
func (q *startLine) wait(ch chan struct{}, cancel <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
	}
	select {
	case <-ch:
		return true
	case <-cancel:
		q.mu.Lock()
		defer q.mu.Unlock()
		for i, w := range q.waiters {
			if w.ch == ch {
				q.waiters = slices.Delete(q.waiters, i, i+1)
				return false
			}
		}
		// The slot was handed over just as we gave up: pass it on.
		q.releaseLocked()
		return false
	}
}

func (q *startLine) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked()
}

func (q *startLine) releaseLocked() {
	if len(q.waiters) > 0 {
		w := q.waiters[0]
		q.waiters = q.waiters[1:]
		close(w.ch)
		return
	}
	q.free++
}

// queued reports how many runs wait for a slot.
func (q *startLine) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}
