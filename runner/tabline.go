package runner

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// maxOpenReorder bounds how long a numbered open waits for its run's
// earlier ones to join the line (the script sent them first, but the
// bridge runs calls concurrently); a lost one cannot stall the rest.
const maxOpenReorder = 2 * time.Second

// tabLine is the one line tab opens of a kind (background or foreground)
// wait in, across all runs. It keeps two promises: at most size such tabs
// are open at once, and the host opens them one at a time in line order,
// so that tabs open in the order scripts asked for them.
//
// Line order is join order, with one correction. An open the SDK numbered
// (openTabOptions.Seq: background opens, in the order the script made
// them) joins only once its run's lower numbers have joined, or when it
// has waited reorderWait for them; a number that never comes is skipped.
// Other opens join as they arrive.
//
// The first in line whose run holds less than its share goes through when
// a slot is free and no other open is going through: it then holds a slot
// and the turn. It gives back the turn with opened, once the host has
// answered its open, and the slot with release, once its tab is gone. A
// run's share is half the slots, at least one: a run that holds its share
// waits for one of its own tabs to go, and never keeps another run from
// the rest. Places of one run keep their order among themselves.
//
// A tabLine starts no goroutines: each open waits on its caller's.
type tabLine struct {
	size        int           // slots in all
	share       int           // slots one run may hold at once
	reorderWait time.Duration // how long an early place waits for lower numbers

	mu   sync.Mutex
	free int
	held map[string]int // slots held, by run
	turn bool           // a place went through and has not yet called opened
	line []*tabPlace    // joined, waiting for a slot and the turn
	runs map[string]*runOpens
}

// tabSlots are the Manager's two lines of tab opens: background tabs and
// foreground ones are bounded apart.
type tabSlots struct {
	background, foreground tabLine
}

func (s *tabSlots) init(background, foreground int) {
	s.background.init(background)
	s.foreground.init(foreground)
}

// of returns the line of background or foreground opens.
func (s *tabSlots) of(background bool) *tabLine {
	if background {
		return &s.background
	}
	return &s.foreground
}

// forget drops run's numbering of opens in both lines.
func (s *tabSlots) forget(run string) {
	s.background.forget(run)
	s.foreground.forget(run)
}

// tabPlace is one open's place.
type tabPlace struct {
	run   string
	seq   int // -1 when not numbered
	state placeState
	ch    chan struct{} // closed when the place goes through
}

type placeState int

const (
	placeEarly   placeState = iota // numbered, waiting for its run's lower numbers
	placeWaiting                   // in line
	placeThrough                   // holds a slot and the turn
	placeGone                      // gave up before joining: its number is skipped
)

// runOpens is the order of one run's numbered opens.
type runOpens struct {
	next  int               // the lowest number yet to join
	early map[int]*tabPlace // numbers above next, by number
}

func (l *tabLine) init(size int) {
	l.size, l.free, l.reorderWait = size, size, maxOpenReorder
	l.share = max(1, size/2)
	l.held = map[string]int{}
}

// atShare reports whether run holds its share of the slots.
func (l *tabLine) atShare(run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[run] >= l.share
}

// join takes a place for an open of run, numbered seq if seq is not nil.
func (l *tabLine) join(run string, seq *int) *tabPlace {
	p := &tabPlace{run: run, seq: -1, ch: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq == nil || *seq < 0 {
		l.enterLocked(p)
		return p
	}
	p.seq = *seq
	ro := l.runs[run]
	if ro == nil {
		ro = &runOpens{early: map[int]*tabPlace{}}
		if l.runs == nil {
			l.runs = map[string]*runOpens{}
		}
		l.runs[run] = ro
	}
	switch {
	case p.seq > ro.next:
		p.state = placeEarly
		ro.early[p.seq] = p
	case p.seq == ro.next:
		l.enterLocked(p)
		ro.next++
		l.catchUpLocked(ro)
	default: // its turn was skipped, or a number used twice
		l.enterLocked(p)
	}
	return p
}

// await returns true once p goes through: the caller holds a slot and the
// turn, opens its tab, then calls opened, and release when the tab is gone
// or its open failed. It returns false, holding nothing, when ctx ends
// first.
func (l *tabLine) await(ctx context.Context, p *tabPlace) bool {
	select {
	case <-p.ch:
		return true
	default:
	}
	var reorder <-chan time.Time
	l.mu.Lock()
	if p.state == placeEarly {
		t := time.NewTimer(l.reorderWait)
		defer t.Stop()
		reorder = t.C
	}
	l.mu.Unlock()
	for {
		select {
		case <-p.ch:
			return true
		case <-reorder:
			reorder = nil
			l.mu.Lock()
			l.stopWaitingLocked(p)
			l.mu.Unlock()
		case <-ctx.Done():
			l.mu.Lock()
			defer l.mu.Unlock()
			l.leaveLocked(p)
			return false
		}
	}
}

// opened gives back the turn.
func (l *tabLine) opened() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turn = false
	l.passLocked()
}

// release gives back a slot run held.
func (l *tabLine) release(run string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.giveLocked(run)
	l.passLocked()
}

func (l *tabLine) giveLocked(run string) {
	l.free++
	if l.held[run]--; l.held[run] <= 0 {
		delete(l.held, run)
	}
}

// forget drops run's numbering once the run lets go of its tabs; places
// still waiting for lower numbers join at once.
func (l *tabLine) forget(run string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ro := l.runs[run]
	if ro == nil {
		return
	}
	delete(l.runs, run)
	for _, n := range slices.Sorted(maps.Keys(ro.early)) {
		if p := ro.early[n]; p.state == placeEarly {
			l.enterLocked(p)
		}
	}
}

// stopWaitingLocked lets p, early past reorderWait, join: after the lower
// numbers of its run that did come, and before the higher ones.
func (l *tabLine) stopWaitingLocked(p *tabPlace) {
	ro := l.runs[p.run]
	if p.state != placeEarly || ro == nil {
		return
	}
	for _, n := range slices.Sorted(maps.Keys(ro.early)) {
		if n > p.seq {
			break
		}
		if q := ro.early[n]; q.state == placeEarly {
			l.enterLocked(q)
		}
		delete(ro.early, n)
	}
	ro.next = p.seq + 1
	l.catchUpLocked(ro)
}

// catchUpLocked lets in the early places that are next in their run.
func (l *tabLine) catchUpLocked(ro *runOpens) {
	for {
		q := ro.early[ro.next]
		if q == nil {
			return
		}
		delete(ro.early, ro.next)
		ro.next++
		if q.state == placeEarly {
			l.enterLocked(q)
		}
	}
}

// leaveLocked gives up p and whatever it holds.
func (l *tabLine) leaveLocked(p *tabPlace) {
	switch p.state {
	case placeEarly:
		p.state = placeGone // its number is skipped when its turn comes
	case placeWaiting:
		l.line = slices.DeleteFunc(l.line, func(q *tabPlace) bool { return q == p })
	case placeThrough:
		// It went through just as it gave up: pass the slot and turn on.
		l.giveLocked(p.run)
		l.turn = false
		l.passLocked()
	}
}

func (l *tabLine) enterLocked(p *tabPlace) {
	p.state = placeWaiting
	l.line = append(l.line, p)
	l.passLocked()
}

// passLocked lets the first in line whose run is under its share through,
// if a slot is free and the turn is not taken.
func (l *tabLine) passLocked() {
	if l.turn || l.free == 0 {
		return
	}
	i := slices.IndexFunc(l.line, func(p *tabPlace) bool { return l.held[p.run] < l.share })
	if i < 0 {
		return
	}
	p := l.line[i]
	l.line = slices.Delete(l.line, i, i+1)
	l.free--
	if l.held == nil {
		l.held = map[string]int{}
	}
	l.held[p.run]++
	l.turn = true
	p.state = placeThrough
	close(p.ch)
}
