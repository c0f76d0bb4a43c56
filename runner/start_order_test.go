package runner

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
)

// Runs take the slots that free in the order they were started, though
// they get ready (read, approved, checked) in whatever order those steps
// end: ten runs started one after another behind a busy slot, on a
// machine kept busy, start 0 to 9. (One slot, so that each start is
// seen before the next: two runs given slots at one moment start in
// either order.) Each reports preparing at Start and
// queued only once it is ready, and a run still being prepared holds no
// ready run back.
func TestRunsStartInTheOrderTheyWereStarted(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.MaxConcurrent = 1 })
	ctx := context.Background()
	var busy []*Run
	for i := range 1 {
		r, err := e.m.Start(ctx, Request{Script: e.script(t, fmt.Sprintf("busy%d.ts", i), "// @permissions none\nimport \"tranquil/automation\";\nconsole.log(\"busy\");\nawait new Promise(() => {});\n")})
		require.NoError(t, err)
		busy = append(busy, r)
		waitOutput(t, e, r.ID(), "busy")
	}
	// The machine is kept busy from the first Start until every run has
	// ended, not while the manager is made.
	unload := keepBusy()
	defer unload()
	var runs []*Run
	for i := range 10 {
		// Scripts of different sizes, so their checks end in another order.
		pad := fmt.Sprintf("// %0*d\n", 1+(9-i)*4000, 0)
		src := fmt.Sprintf("// @permissions none\n%simport { context } from \"tranquil/automation\";\nawait context.result(%d);\n", pad, i)
		r, err := e.m.Start(ctx, Request{Script: e.script(t, fmt.Sprintf("run%d.ts", i), src)})
		require.NoError(t, err)
		require.Equal(t, history.StatePreparing, r.State(), "a run is preparing at Start")
		runs = append(runs, r)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, r := range runs {
		for r.State() != history.StateQueued {
			if st := r.State(); st.Terminal() {
				entry, _ := r.Wait(ctx)
				t.Fatalf("run %s ended %s before it queued: %s", r.ID(), st, entry.Reason)
			}
			require.True(t, time.Now().Before(deadline), "run %s never queued: %s", r.ID(), r.State())
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, r := range busy {
		r.Cancel("make room")
	}
	for _, r := range runs {
		_, err := r.Wait(ctx)
		require.NoError(t, err)
	}
	unload()
	index := map[string]int{}
	for i, r := range runs {
		index[r.ID()] = i
	}
	var started, queued []int
	e.mu.Lock()
	for _, ev := range e.events {
		i, ok := index[ev.RunID]
		if !ok || ev.Kind != EventState {
			continue
		}
		switch ev.State {
		case history.StateStarting:
			started = append(started, i)
		case history.StateQueued:
			queued = append(queued, i)
		}
	}
	e.mu.Unlock()
	t.Logf("ready in the order %v", queued)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, started, "started in the order of Start")
	for _, r := range runs {
		entry, _ := r.Wait(ctx)
		assert.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	}
}

// A run still being prepared (here, waiting for consent) holds back no
// run started after it that is ready, though a slot is all there is.
func TestARunWaitingForConsentHoldsNoOneBack(t *testing.T) {
	p := &blockingPrompter{asked: make(chan struct{}, 4), release: make(chan struct{}), answer: consent.Approve}
	e := newPromptedMgr(t, p, func(c *Config) { c.MaxConcurrent = 1 })
	ctx := context.Background()
	first, err := e.m.Start(ctx, Request{Script: e.script(t, "asks.ts", promptedScript)})
	require.NoError(t, err)
	waitAsked(t, p)
	assert.Equal(t, history.StatePreparing, first.State(), "waiting for consent is preparing, not queued")
	_, entry := e.run(t, Request{Script: e.script(t, "ready.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\nawait context.result(1);\n")})
	assert.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Equal(t, history.StatePreparing, first.State())
	p.free()
	entry, err = first.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
}

// keepBusy keeps every core of the machine busy, twice over, until the
// function it returns is called (once or more): it returns once the
// goroutines are gone.
func keepBusy() func() {
	stop := make(chan struct{})
	var burn sync.WaitGroup
	for range runtime.NumCPU() * 2 {
		burn.Add(1)
		go func() {
			defer burn.Done()
			for x := 0; ; x++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = fmt.Sprint(x)
			}
		}()
	}
	return sync.OnceFunc(func() {
		close(stop)
		burn.Wait()
	})
}
