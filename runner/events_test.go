package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
)

// A host sends an event by name with a payload, and step.waitForEvent
// receives it; the trigger's payload reaches context.payload. The event
// is sent before the script connected, which SendEvent waits for.
func TestSendEventReachesWaitForEvent(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "wait.ts", `// @permissions none
import { context, step } from "tranquil/automation";
const ev = await step.waitForEvent("approve", { timeout: 60000 });
await context.result({ type: ev.type, payload: ev.payload, trigger: context.trigger, triggerPayload: context.payload ?? null });
`)
	r, err := e.m.Start(context.Background(), Request{Script: p, Trigger: "webhook", TriggerPayload: json.RawMessage(`{"order":7,"by":"ada"}`)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, e.m.SendEvent(ctx, r.ID(), "approve", json.RawMessage(`{"ok":true,"note":"looks right"}`)))
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	assert.JSONEq(t, `{"type":"approve","payload":{"ok":true,"note":"looks right"},"trigger":"webhook","triggerPayload":{"order":7,"by":"ada"}}`, string(entry.Result))

	assert.ErrorIs(t, e.m.SendEvent(ctx, r.ID(), "approve", nil), ErrUnknownRun, "an ended run is no longer live")
	assert.ErrorIs(t, r.SendEvent(ctx, "approve", nil), ErrRunEnded)
	assert.ErrorIs(t, r.SendEvent(ctx, "big", strings.Repeat("x", MaxPayloadBytes)), ErrPayloadTooLarge)
	_, err = e.m.Start(ctx, Request{Script: p, TriggerPayload: json.RawMessage(`{nope`)})
	assert.Error(t, err, "a trigger payload that is not JSON is the caller's error")
}

// Steps report their start, retries and end, and context.progress its
// message and fraction, as run events.
func TestStepAndProgressEvents(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "steps.ts", `// @permissions none
import { context, step } from "tranquil/automation";
await step.do("fetch", ({ attempt }) => { if (attempt === 1) throw new Error("flaky"); return attempt; }, { retries: 2, delay: 10 });
context.progress("half way", 0.5);
context.progress("no idea how far");
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	e.mu.Lock()
	defer e.mu.Unlock()
	var steps []StepEvent
	var progress []string
	for _, ev := range e.events {
		switch ev.Kind {
		case EventStep:
			steps = append(steps, *ev.Step)
		case EventProgress:
			progress = append(progress, ev.Line+" "+strconv.FormatFloat(ev.Fraction, 'g', -1, 64))
		}
	}
	assert.Equal(t, []StepEvent{
		{Name: "fetch", Kind: "do", Phase: "start", Attempt: 1},
		{Name: "fetch", Kind: "do", Phase: "retry", Attempt: 2, Error: "flaky"},
		{Name: "fetch", Kind: "do", Phase: "end", Attempt: 2, OK: true},
	}, steps)
	assert.Equal(t, []string{"half way 0.5", "no idea how far -1"}, progress)
}

// A cancelled run is reported as the reason it was cancelled, not as the
// CancelledError stack the script ended with.
func TestCancelledRunReportsItsReason(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "sleepy.ts", `// @permissions none
import { step } from "tranquil/automation";
console.log("sleeping");
await step.sleep("nap", 60000);
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "sleeping")
	r.Cancel("user pressed stop")
	entry, err := r.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, history.StateCancelled, entry.State)
	assert.Equal(t, "user pressed stop", entry.FirstError)
	assert.Contains(t, entry.Output, "tranquil: cancelled: user pressed stop")
	assert.NotContains(t, entry.Output, "CancelledError")
	assert.NotContains(t, entry.Output, "    at ")
}

// An error the SDK throws names the script's line in the history and in
// the host's failure notification, not the SDK's.
func TestSDKErrorNamesTheScriptLine(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "nogrant.ts", `// @permissions none
import { clipboard } from "tranquil/automation";

await clipboard.read();
`)
	require.Equal(t, history.StateFailed, entry.State, entry.Output)
	assert.True(t, strings.HasPrefix(entry.FirstError, "error: NotGrantedError (not_granted): clipboard.read is not granted"), entry.FirstError)
	assert.Contains(t, entry.FirstError, "nogrant.ts:4:")
	assert.NotContains(t, entry.Output, "runtime.ts")
	select {
	case msg := <-e.host.notified:
		assert.Contains(t, msg, "nogrant.ts:4:")
	case <-time.After(5 * time.Second):
		t.Fatal("the host was not notified")
	}
}

// context.log lines are kept in the history entry's output.
func TestContextLogIsInHistory(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "log.ts", `// @permissions none
import { context } from "tranquil/automation";
context.log("step one done", { rows: 3 });
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	assert.Contains(t, entry.Output, "step one done { rows: 3 }")
}

// ui.open takes only the documented splits; the host never sees another.
func TestInvalidSplitIsRefused(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "split.ts", `// @permissions none
import { context, ui } from "tranquil/automation";
try { await ui.open("notes.md", { split: "diagonal" as "left" }); } catch (e) { await context.result(String(e)); }
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	assert.Contains(t, string(entry.Result), `split must be left, right, up or down, not \"diagonal\"`)
	e.host.mu.Lock()
	assert.Empty(t, e.host.opened)
	e.host.mu.Unlock()

	// The host side checks as well, for a client that skips the SDK's check.
	r := newRun(e.m, "x", Request{Script: "/s.ts"})
	err := (&uiAPI{r}).Open(context.Background(), "/notes.md", OpenOptions{Split: "diagonal"})
	assert.ErrorContains(t, err, "split must be")
}

// A deno process killed from outside the app is recorded as that.
func TestKilledFromOutside(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "victim.ts", `// @permissions none
console.log("pid " + Deno.pid);
await new Promise(() => {});
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	waitOutput(t, e, r.ID(), "pid ")
	var pid int
	e.mu.Lock()
	for _, ev := range e.events {
		if ev.RunID == r.ID() && strings.HasPrefix(ev.Line, "pid ") {
			pid, _ = strconv.Atoi(strings.TrimPrefix(ev.Line, "pid "))
		}
	}
	e.mu.Unlock()
	require.NotZero(t, pid)
	proc, err := os.FindProcess(pid)
	require.NoError(t, err)
	require.NoError(t, proc.Signal(syscall.SIGKILL))
	entry, err := r.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, history.StateFailed, entry.State)
	want := "the process was stopped from outside the app (signal SIGKILL)"
	if runtime.GOOS == "windows" {
		// Windows has no signals: a kill from outside (TerminateProcess)
		// is an exit code, 1 from Go's Kill as from Task Manager's.
		want = "exited with code 1"
	}
	assert.Equal(t, want, entry.Reason)
}

// The time a person spends at the consent prompt is not part of the run's
// duration.
func TestDurationExcludesConsent(t *testing.T) {
	const asking = 2 * time.Second
	e := newMgr(t, nil)
	store, err := consent.OpenStore(e.data+"/consent2.json", consent.StoreOptions{})
	require.NoError(t, err)
	e.m.gate = consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
		time.Sleep(asking)
		return consent.Approve, nil
	}))
	entry := e.runScript(t, "asks.ts", "// @permissions clipboard\nconsole.log(1);\n")
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	wall := entry.End.Sub(entry.Start)
	assert.GreaterOrEqual(t, wall-entry.Duration, asking, "wall %s, duration %s", wall, entry.Duration)
}

var _ = errors.New

// An @std module (or any remote code) cannot load in a run that may load
// no remote code: plan and the run refuse it up front, rather than the
// import failing at run time while plan says the script is fine.
func TestRemoteImportIsRefusedWhenRunsLoadNone(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "fanout.ts", `// @permissions none
import { pooledMap } from "@std/async";
console.log(pooledMap);
`)
	plan, err := e.m.Plan(context.Background(), Request{Script: p})
	require.NoError(t, err)
	require.ErrorIs(t, plan.Refused, ErrRemoteImport)
	assert.Contains(t, plan.Refused.Error(), "jsr:@std/async@1.0.13 cannot be loaded")
	_, entry := e.run(t, Request{Script: p})
	assert.Equal(t, history.StateRefused, entry.State)
	assert.Contains(t, entry.Reason, "jsr:@std/async@1.0.13 cannot be loaded")
}
