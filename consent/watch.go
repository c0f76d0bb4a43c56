package consent

import (
	"context"
	"os"
	"time"
)

// DefaultWatchInterval is how often a Store with revocation subscribers
// looks at its file for revocations made elsewhere, when
// StoreOptions.WatchInterval is zero.
const DefaultWatchInterval = 500 * time.Millisecond

// watcher notices revocations another Store or process made: while a
// Store has OnRevoke subscribers, one goroutine stats the file at each
// interval and, when the file was replaced, reloads it and reports every
// script that was approved and no longer is. Polling one stat is portable
// and cheap, and the file is only ever replaced whole, so a changed
// identity, size or time means a write happened.
type watcher struct {
	stop chan struct{}
	done chan struct{}
	last os.FileInfo // the file as last loaded; nil when absent
}

// watchLocked starts the watcher when the first subscriber arrives. s.mu
// is held.
func (s *Store) watchLocked() {
	if s.interval < 0 || s.watch != nil {
		return
	}
	w := &watcher{stop: make(chan struct{}), done: make(chan struct{})}
	s.watch = w
	s.known = map[string]bool{}
	// The first load runs on the goroutine, so OnRevoke never waits on
	// the file; until then known is empty and nothing can be missed,
	// because every approval this process acts on is noted (see note).
	go s.poll(w)
}

// unwatchLocked stops the watcher once the last subscriber leaves and
// returns what to wait for; s.mu is held, so the caller waits after
// releasing it.
func (s *Store) unwatchLocked() (wait <-chan struct{}) {
	if s.watch == nil || len(s.subs) > 0 {
		return nil
	}
	w := s.watch
	s.watch, s.known = nil, nil
	close(w.stop)
	return w.done
}

// note records that script's approval is in force in this process, so a
// revocation elsewhere is reported even if the watcher never saw it
// approved. s.watchMu is held.
func (s *Store) note(script string, approved bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		return
	}
	if approved {
		s.known[script] = true
	} else {
		delete(s.known, script)
	}
}

func (s *Store) poll(w *watcher) {
	defer close(w.done)
	interval := s.interval
	if interval == 0 {
		interval = DefaultWatchInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	first := true
	for {
		if !first {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
		revoked := s.check(w, first)
		first = false
		s.notify(w, revoked)
	}
}

// check reloads the file if it changed and returns the scripts whose
// approval went away since the last look.
func (s *Store) check(w *watcher, first bool) []string {
	fi, err := os.Stat(s.path)
	if err != nil {
		fi = nil
	}
	if !first && sameFile(w.last, fi) {
		return nil
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := s.load(ctx)
	if err != nil {
		s.log.Warn("consent: cannot read the approvals to look for revocations; trying again", "path", s.path, "err", err)
		return nil
	}
	w.last = fi
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch != w {
		return nil
	}
	var revoked []string
	for k := range s.known {
		if _, ok := all.ok[k]; !ok {
			revoked = append(revoked, k)
			delete(s.known, k)
		}
	}
	for k := range all.ok {
		s.known[k] = true
	}
	return revoked
}

// notify tells the subscribers, unless the watcher was stopped meanwhile.
func (s *Store) notify(w *watcher, revoked []string) {
	for _, k := range revoked {
		s.mu.Lock()
		if s.watch != w {
			s.mu.Unlock()
			return
		}
		subs := s.subscribers()
		s.mu.Unlock()
		for _, f := range subs {
			f(Revocation{Script: k})
		}
	}
}

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
