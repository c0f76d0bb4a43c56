package cdp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrTasksRunning reports that goroutines a tab started (a dialog's
// answer, a frame's setup, a cleanup call) were still running when
// [Tab.Detach] or [Tab.Close] stopped waiting for them. The session has
// ended all the same; the message names what was left.
var ErrTasksRunning = errors.New("cdp: tab goroutines still running")

// taskGroup owns every goroutine a tab starts beyond the call that
// started it, so that each has an owner that stops it: the tab's end
// cancels their context and waits for them, for a bounded time.
//
// Goroutines a call waits for before it returns (its parallel protocol
// calls) are owned by that call and do not go through the group.
type taskGroup struct {
	ctx    context.Context
	cancel context.CancelFunc
	wait   time.Duration // how long stop waits; defaultCleanupTimeout when zero

	mu      sync.Mutex
	running map[string]int // by task name, for the report of those left
	started map[string]int // by task name, every task started, for tests
	idle    chan struct{}  // closed when running empties; nil while it is empty
}

func newTaskGroup() *taskGroup {
	ctx, cancel := context.WithCancel(context.Background())
	return &taskGroup{ctx: ctx, cancel: cancel, running: map[string]int{}, started: map[string]int{}}
}

// Go runs f on a goroutine of the group, with a context that ends when
// the group stops. f runs even once the group has stopped, with its
// context ended, so that what it releases (a count, a session's route)
// is still released. name says what f is for in the report of goroutines
// left running.
func (g *taskGroup) Go(name string, f func(ctx context.Context)) {
	g.mu.Lock()
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	g.running[name]++
	g.started[name]++
	g.mu.Unlock()
	go func() {
		defer g.done(name)
		f(g.ctx)
	}()
}

func (g *taskGroup) done(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running[name]--; g.running[name] == 0 {
		delete(g.running, name)
	}
	if len(g.running) == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// cleanup is a context for one cleanup call of a task: the group's,
// bounded by defaultCleanupTimeout as such calls always are.
func cleanup(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, defaultCleanupTimeout)
}

// stop cancels the group's context and waits for its goroutines, until
// ctx ends or the group's wait has passed. Tasks left then are reported
// with ErrTasksRunning, and not waited for. It may be called more than
// once.
func (g *taskGroup) stop(ctx context.Context) error {
	g.mu.Lock()
	idle := g.idle
	g.mu.Unlock()
	g.cancel()
	if idle == nil {
		return nil
	}
	wait := g.wait
	if wait <= 0 {
		wait = defaultCleanupTimeout
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-idle:
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	if left := g.left(); left != "" {
		return fmt.Errorf("%w: %s", ErrTasksRunning, left)
	}
	return nil
}

// left describes the tasks still running, "" when none is.
func (g *taskGroup) left() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var parts []string
	for name, n := range g.running {
		parts = append(parts, fmt.Sprintf("%s (%d)", name, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// counts reports how many tasks run now, and how many of each name have
// started.
func (g *taskGroup) counts() (running int, started map[string]int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range g.running {
		running += n
	}
	started = make(map[string]int, len(g.started))
	for name, n := range g.started {
		started[name] = n
	}
	return running, started
}
