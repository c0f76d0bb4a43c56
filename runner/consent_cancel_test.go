package runner

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
)

// blockingPrompter holds every prompt open until its context ends or, when
// it ignores its context, until release is closed; asked hears of each
// prompt as it opens.
type blockingPrompter struct {
	ignoreCtx bool
	asked     chan struct{}
	release   chan struct{}
	answer    consent.Answer
	once      sync.Once
}

// free answers every prompt, open or to come.
func (p *blockingPrompter) free() { p.once.Do(func() { close(p.release) }) }

func (p *blockingPrompter) Ask(ctx context.Context, _ consent.Request) (consent.Answer, error) {
	p.asked <- struct{}{}
	if p.ignoreCtx {
		<-p.release
		return p.answer, nil
	}
	select {
	case <-ctx.Done():
		return consent.Deny, ctx.Err()
	case <-p.release:
		return p.answer, nil
	}
}

// newPromptedMgr is newMgr with p as the consent prompter. p answers its
// prompts when the test ends, before the manager is closed, so that a
// failing test ends rather than hangs.
func newPromptedMgr(t *testing.T, p *blockingPrompter, mods ...func(*Config)) *mgrEnv {
	e := newMgr(t, func(c *Config) {
		for _, mod := range mods {
			mod(c)
		}
		store, err := consent.OpenStore(c.DataDir+"/consent-blocking.json", consent.StoreOptions{})
		require.NoError(t, err)
		c.Gate = consent.NewGate(store, p)
	})
	t.Cleanup(p.free)
	return e
}

// waitAsked waits until the prompter has a prompt open.
func waitAsked(t *testing.T, p *blockingPrompter) {
	t.Helper()
	select {
	case <-p.asked:
	case <-time.After(60 * time.Second):
		t.Fatal("the run never asked for consent")
	}
}

// terminalStates lists the terminal state events the manager emitted for
// run id.
func (e *mgrEnv) terminalStates(id string) []history.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []history.State
	for _, ev := range e.events {
		if ev.RunID == id && ev.Kind == EventState && ev.State.Terminal() {
			out = append(out, ev.State)
		}
	}
	return out
}

const promptedScript = "// @permissions clipboard\nimport { context } from \"tranquil/automation\";\nawait context.result(\"ran\");\n"

// Cancel reaches a run that waits for consent: the prompt's context ends,
// the run is recorded cancelled once, and the next run of the script is
// asked again and runs.
func TestCancelWhileWaitingForConsent(t *testing.T) {
	p := &blockingPrompter{asked: make(chan struct{}, 4), release: make(chan struct{}), answer: consent.Approve}
	e := newPromptedMgr(t, p)
	script := e.script(t, "asks.ts", promptedScript)
	r, err := e.m.Start(context.Background(), Request{Script: script})
	require.NoError(t, err)
	waitAsked(t, p)
	r.Cancel("the user gave up")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err, "Cancel did not end a run waiting for consent")
	assert.Equal(t, history.StateCancelled, entry.State)
	assert.Equal(t, "the user gave up", entry.Reason)
	assert.Equal(t, []history.State{history.StateCancelled}, e.terminalStates(r.ID()))
	got, ok := e.m.History().Get(r.ID())
	require.True(t, ok)
	assert.Equal(t, history.StateCancelled, got.State)

	// The gate is not stuck on the prompt taken down: the next run asks
	// again, is approved, and runs in deno.
	p.free()
	_, entry = e.run(t, Request{Script: script})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	assert.JSONEq(t, `"ran"`, string(entry.Result))
}

// Close reaches runs that wait for consent, whether or not the Prompter
// honours its context: Close returns within a bound and each run is
// recorded cancelled once.
func TestCloseWhileWaitingForConsent(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		name := "prompter honours ctx"
		if ignore {
			name = "prompter ignores ctx"
		}
		t.Run(name, func(t *testing.T) {
			p := &blockingPrompter{ignoreCtx: ignore, asked: make(chan struct{}, 4), release: make(chan struct{}), answer: consent.Approve}
			// A prompter that ignores its context returns when the test
			// ends, so that its goroutine does too.
			defer p.free()
			e := newPromptedMgr(t, p)
			r, err := e.m.Start(context.Background(), Request{Script: e.script(t, "asks.ts", promptedScript)})
			require.NoError(t, err)
			waitAsked(t, p)
			closed := make(chan error, 1)
			start := time.Now()
			go func() { closed <- e.m.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Close hung on a run waiting for consent")
			}
			t.Logf("Close returned in %s", time.Since(start).Round(time.Millisecond))
			select {
			case <-r.Done():
			default:
				t.Fatal("Close returned before the run ended")
			}
			entry, err := r.Wait(context.Background())
			require.NoError(t, err)
			assert.Equal(t, history.StateCancelled, entry.State)
			assert.Equal(t, "the host is shutting down", entry.Reason)
			assert.Equal(t, []history.State{history.StateCancelled}, e.terminalStates(r.ID()))
		})
	}
}

// Shutdown gives scripts their grace: a script's context.signal handler
// runs and the run is recorded cancelled; Close does not wait for it; and
// a script that ignores the cancel is killed once Shutdown's context
// ends, which Shutdown reports.
func TestShutdownGivesScriptsTheirGrace(t *testing.T) {
	const tidy = `// @permissions none
import { context } from "tranquil/automation";
context.signal.addEventListener("abort", () => { console.log("tidied up: " + context.signal.reason.message); Deno.exit(0); });
console.log("working");
await new Promise(() => {});
`
	const stubborn = `// @permissions none
import { context } from "tranquil/automation";
console.log("working");
while (true) { await new Promise((r) => setTimeout(r, 10)); }
`
	for _, c := range []struct {
		name, src string
		shutdown  time.Duration // 0: Close
		tidied    bool
		killed    bool
	}{
		{"shutdown: a script that tidies up", tidy, 30 * time.Second, true, false},
		{"close: a script that tidies up", tidy, 0, false, false},
		{"shutdown: a script that ignores the cancel", stubborn, 300 * time.Millisecond, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newMgr(t, func(cfg *Config) { cfg.CancelGrace = 5 * time.Second })
			r, err := e.m.Start(context.Background(), Request{Script: e.script(t, "s.ts", c.src)})
			require.NoError(t, err)
			waitOutput(t, e, r.ID(), "working")
			start := time.Now()
			if c.shutdown > 0 {
				ctx, cancel := context.WithTimeout(context.Background(), c.shutdown)
				defer cancel()
				err = e.m.Shutdown(ctx)
			} else {
				err = e.m.Close()
			}
			took := time.Since(start)
			t.Logf("returned in %v: %v", took.Round(time.Millisecond), err)
			if c.killed {
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Less(t, took, c.shutdown+DefaultKillGrace+2*time.Second, "killed once the context ended")
			} else {
				require.NoError(t, err)
			}
			entry, err := r.Wait(context.Background())
			require.NoError(t, err)
			assert.Equal(t, history.StateCancelled, entry.State)
			assert.Equal(t, "the host is shutting down", entry.Reason)
			if c.tidied {
				assert.Contains(t, entry.Output, "tidied up: the host is shutting down")
			} else {
				assert.NotContains(t, entry.Output, "tidied up")
			}
			assert.Equal(t, []history.State{history.StateCancelled}, e.terminalStates(r.ID()))
		})
	}
}
