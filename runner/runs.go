package runner

import (
	"context"
	"sync"
)

// runTable is the Manager's live runs: the preparing, queued and
// executing ones by ID, the line that bounds how many execute at once (in
// the order they were started), and the goroutine each run proceeds on.
//
// It owns one goroutine per run, started by start; the goroutine returns
// when the run has ended (it ends by itself, or close cancels it through
// the caller, who kills what closeAll returns), and wait waits for all of
// them.
type runTable struct {
	queue startLine // the runs executing at once, MaxConcurrent; see Run.execute

	mu      sync.Mutex
	closed  bool
	started uint64 // runs started so far: the next one's place in line
	runs    map[string]*Run
	wg      sync.WaitGroup
}

func (t *runTable) init(maxConcurrent int) {
	t.queue.init(maxConcurrent)
	t.runs = map[string]*Run{}
}

// start records r and its place in the order of starts (r.seq), calls
// begun, then runs fn(ctx) for r on a goroutine of its own. It is
// ErrClosed, and calls nothing, after closeAll.
func (t *runTable) start(ctx context.Context, r *Run, begun func(), fn func(context.Context)) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	t.started++
	r.seq = t.started
	t.runs[r.id] = r
	t.wg.Add(1)
	t.mu.Unlock()
	begun()
	go func() {
		defer t.wg.Done()
		fn(ctx)
	}()
	return nil
}

// list returns the live runs.
func (t *runTable) list() []*Run {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*Run, 0, len(t.runs))
	for _, r := range t.runs {
		out = append(out, r)
	}
	return out
}

// lookup returns the live run with this ID.
func (t *runTable) lookup(id string) (*Run, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.runs[id]
	return r, ok
}

// forget drops an ended run.
func (t *runTable) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.runs, id)
}

// closeAll refuses new runs and returns the live ones, for the caller to
// stop; first is false when it was closed already.
func (t *runTable) closeAll() (live []*Run, first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, false
	}
	t.closed = true
	live = make([]*Run, 0, len(t.runs))
	for _, r := range t.runs {
		live = append(live, r)
	}
	return live, true
}

// wait returns once every run's goroutine has returned.
func (t *runTable) wait() { t.wg.Wait() }
