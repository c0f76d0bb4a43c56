package runner

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tranquil/automation/history"
)

// unsavedEntries holds the newest entry of each run the history could not
// store at all; each later Put that succeeds retries them, and so does
// Close.
type unsavedEntries struct {
	mu      sync.Mutex
	entries map[string]history.Entry
}

// put stores e in h and returns h's error; an entry h could not store at
// all is kept for the next retry.
func (u *unsavedEntries) put(h *history.Store, e history.Entry) error {
	err := h.Put(e)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err == nil || errors.Is(err, history.ErrTrimmed) {
		delete(u.entries, e.ID)
		u.retryLocked(h)
		return err
	}
	if u.entries == nil {
		u.entries = map[string]history.Entry{}
	}
	u.entries[e.ID] = e
	return err
}

// flush retries what is kept and returns the IDs of the runs whose
// entries are still not stored.
func (u *unsavedEntries) flush(h *history.Store) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.retryLocked(h)
	var ids []string
	for id := range u.entries {
		ids = append(ids, id)
	}
	return ids
}

func (u *unsavedEntries) retryLocked(h *history.Store) {
	for id, e := range u.entries {
		if err := h.Put(e); err == nil || errors.Is(err, history.ErrTrimmed) {
			delete(u.entries, id)
		}
	}
}

// record stores a run's entry. A failure is logged and told to the host
// once per run: an entry stored trimmed (a full disk) kept its outcome; one
// not stored at all is kept and retried after the next Put that succeeds,
// and at Close.
func (m *Manager) record(r *Run, e history.Entry) {
	err := m.unsaved.put(m.hist, e)
	if err == nil {
		return
	}
	m.log.Warn("runner: recording run history", "run", e.ID, "error", err)
	r.mu.Lock()
	told := r.historyTold
	r.historyTold = true
	r.mu.Unlock()
	if told {
		return
	}
	what := fmt.Sprintf("the run history could not save this run (it will be retried): %v", err)
	if errors.Is(err, history.ErrTrimmed) {
		what = fmt.Sprintf("the run history kept this run's outcome but not all of its output: %v", err)
	}
	r.tellHost(LevelWarning, what)
}

// settleOrphanedEntries ends the script runs a previous host left live:
// that host died, and its runs died with it. Runs of another kind (a
// durable workflow's) are the host's to settle: they may outlive a host.
func (m *Manager) settleOrphanedEntries() {
	for _, e := range m.hist.List() {
		if e.State.Terminal() || e.Kind != history.KindScript {
			continue
		}
		e.State, e.Reason = history.StateFailed, "the host stopped during the run"
		if e.End.IsZero() {
			e.End = time.Now().UTC()
			e.Duration = e.End.Sub(e.Start)
		}
		if err := m.hist.Put(e); err != nil {
			m.log.Warn("runner: settling a run left by a previous host", "run", e.ID, "error", err)
		}
	}
}

func (m *Manager) closeHistory() {
	if m.ownsH {
		m.hist.Close()
	}
}
