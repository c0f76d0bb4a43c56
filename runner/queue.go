package runner

import "sync"

// fifo is a counting semaphore that admits waiters strictly in arrival
// order, so a run queued first starts first.
type fifo struct {
	mu      sync.Mutex
	free    int
	waiters []chan struct{}
}

func (q *fifo) init(n int) { q.free = n }

// acquire waits for a slot; it returns false if cancel closes first.
func (q *fifo) acquire(cancel <-chan struct{}) bool {
	return q.wait(q.enter(), cancel)
}

// enter takes a place in line and returns the channel that is closed when
// the place gets a slot (at once, if one is free and nobody waits).
func (q *fifo) enter() chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := make(chan struct{})
	if q.free > 0 && len(q.waiters) == 0 {
		q.free--
		close(ch)
		return ch
	}
	q.waiters = append(q.waiters, ch)
	return ch
}

// wait waits for the place ch to get its slot; it returns false, giving up
// the place, if cancel closes first.
func (q *fifo) wait(ch chan struct{}, cancel <-chan struct{}) bool {
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
			if w == ch {
				q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
				return false
			}
		}
		// The slot was handed over just as we gave up: pass it on.
		q.releaseLocked()
		return false
	}
}

func (q *fifo) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked()
}

func (q *fifo) releaseLocked() {
	if len(q.waiters) > 0 {
		w := q.waiters[0]
		q.waiters = q.waiters[1:]
		close(w)
		return
	}
	q.free++
}

// queued reports how many runs wait for a slot.
func (q *fifo) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}
