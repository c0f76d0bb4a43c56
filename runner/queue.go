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
	q.mu.Lock()
	if q.free > 0 && len(q.waiters) == 0 {
		q.free--
		q.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()
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
