package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/textcut"
	"github.com/tranquil/automation/rpc/capnweb"
)

// hostRecorder is the host's side of the hostile-script tests: it records
// every event and notification a run hands the host, and what came after
// that run's end event.
type hostRecorder struct {
	mu     sync.Mutex
	events []Event
	notes  []recordedNote
	ended  map[string]bool
	late   []string
}

type recordedNote struct {
	run, msg string
	level    Level
}

func (h *hostRecorder) event(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended[ev.RunID] {
		h.late = append(h.late, fmt.Sprintf("event %s %q", ev.Kind, textcut.Cut(ev.Line, 80)))
	}
	if ev.Kind == EventState && ev.State.Terminal() {
		h.ended[ev.RunID] = true
	}
	h.events = append(h.events, ev)
}

func (h *hostRecorder) Notify(_ context.Context, run RunInfo, msg string, level Level) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended[run.ID] {
		h.late = append(h.late, fmt.Sprintf("notification %q", textcut.Cut(msg, 80)))
	}
	h.notes = append(h.notes, recordedNote{run: run.ID, msg: msg, level: level})
	return nil
}

func (h *hostRecorder) Open(context.Context, RunInfo, string, OpenOptions) error { return nil }

// of returns the run's events of kind.
func (h *hostRecorder) of(runID string, kind EventKind) []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Event
	for _, ev := range h.events {
		if ev.RunID == runID && ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// notesOf returns the run's notifications.
func (h *hostRecorder) notesOf(runID string) []recordedNote {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []recordedNote
	for _, n := range h.notes {
		if n.run == runID {
			out = append(out, n)
		}
	}
	return out
}

// waitLog waits for a context.log line of the run holding want.
func (h *hostRecorder) waitLog(t *testing.T, runID, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, ev := range h.of(runID, EventLog) {
			if strings.Contains(ev.Line, want) {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	var out []string
	for _, ev := range h.of(runID, EventOutput) {
		out = append(out, ev.Line)
	}
	for _, ev := range h.of(runID, EventLog) {
		out = append(out, "log: "+textcut.Cut(ev.Line, 200))
	}
	t.Fatalf("no log line %q; output:\n%s", want, strings.Join(out, "\n"))
}

// dropped sums what the run's EventDropped events say of channel ch.
func (h *hostRecorder) dropped(runID string, ch Channel) (n, markers int) {
	for _, ev := range h.of(runID, EventDropped) {
		if ev.Stream == string(ch) {
			n += ev.Dropped
			markers++
		}
	}
	return n, markers
}

func newHostileEnv(t *testing.T) (*mgrEnv, *hostRecorder) {
	rec := &hostRecorder{ended: map[string]bool{}}
	e := newMgr(t, func(c *Config) {
		c.Host.UI = rec
		c.OnEvent = rec.event
	})
	return e, rec
}

// assertCut checks that s was cut to at most max bytes from a text of
// whole bytes, and says how many bytes it lost.
func assertCut(t *testing.T, s string, max, whole int) {
	t.Helper()
	assert.LessOrEqual(t, len(s), max)
	assert.True(t, utf8.ValidString(s), "cut inside a character")
	i := strings.LastIndex(s, "… [")
	require.GreaterOrEqual(t, i, 0, "no marker in %q", textcut.Cut(s, 100))
	assert.Equal(t, "… ["+strconv.Itoa(whole-i)+" bytes cut]", s[i:])
}

// A script hands context.log and ui.notify 20 MiB strings, context.progress
// and a step huge text: the host gets each cut to its limit, with a marker
// saying how much was cut, and the run goes on.
func TestHostileHugeTextIsCut(t *testing.T) {
	e, rec := newHostileEnv(t)
	const big = 20 << 20
	r, entry := e.run(t, Request{Script: e.script(t, "huge.ts", `// @permissions none
import { context, step, ui } from "tranquil/automation";
const big = "x".repeat(`+strconv.Itoa(big)+`);
for (let i = 0; i < 3; i++) context.log(big);
await ui.notify(big);
await ui.notify("é".repeat(`+strconv.Itoa(big/2)+`), { level: "warning" });
context.progress(big, 0.5);
await step.do("s".repeat(1 << 20), () => 1);
try {
  await step.do("fails", () => { throw new Error(big); }, { retries: 1, delay: 1 });
} catch { /* expected */ }
console.log("survived");
`)})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "survived")

	logs := rec.of(r.ID(), EventLog)
	require.Len(t, logs, 3)
	for _, ev := range logs {
		assertCut(t, ev.Line, MaxLineBytes, big)
	}
	notes := rec.notesOf(r.ID())
	require.Len(t, notes, 2)
	assertCut(t, notes[0].msg, MaxLineBytes, big)
	assertCut(t, notes[1].msg, MaxLineBytes, big)
	assert.Equal(t, LevelWarning, notes[1].level)
	progress := rec.of(r.ID(), EventProgress)
	require.Len(t, progress, 1)
	assertCut(t, progress[0].Line, MaxReportBytes, big)
	steps := rec.of(r.ID(), EventStep)
	require.NotEmpty(t, steps)
	var errs int
	for _, ev := range steps {
		if strings.HasPrefix(ev.Step.Name, "sss") {
			assertCut(t, ev.Step.Name, MaxStepNameBytes, 1<<20)
			assert.Equal(t, ev.Step.Name, ev.Line)
		}
		if ev.Step.Error != "" {
			errs++
			assert.LessOrEqual(t, len(ev.Step.Error), MaxReportBytes)
			assert.Contains(t, ev.Step.Error, " bytes cut]")
		}
	}
	assert.Positive(t, errs, "the failing step reported its error")

	var total int
	rec.mu.Lock()
	for _, ev := range rec.events {
		if ev.RunID == r.ID() {
			total += len(ev.Line)
			if ev.Step != nil {
				total += len(ev.Step.Name) + len(ev.Step.Error)
			}
		}
	}
	rec.mu.Unlock()
	for _, n := range notes {
		total += len(n.msg)
	}
	// Three log lines, two notifications, a progress message and the
	// failing step's error twice (retry, end) of 20 MiB, the step's name
	// twice (start, end) of 1 MiB.
	sent := 8*big + 2<<20
	t.Logf("the script sent %d MiB of text; the host received %d KiB", sent>>20, total>>10)
	assert.Less(t, total, 6*MaxLineBytes, "what the host received is bounded")
	assert.Less(t, len(entry.Output), 4*MaxLineBytes)
}

// A script that calls context.log, context.progress, step.do and ui.notify
// as fast as it can: the host gets at most each channel's burst and rate,
// the rest is dropped and counted in markers (nothing is lost unsaid), and
// the script is never held up.
func TestHostileFloodsAreRateLimited(t *testing.T) {
	e, rec := newHostileEnv(t)
	const logs, progress, steps, notes = 30000, 6000, 4000, 300
	start := time.Now()
	r, entry := e.run(t, Request{Script: e.script(t, "flood.ts", fmt.Sprintf(`// @permissions none
import { context, step, ui } from "tranquil/automation";
for (let i = 0; i < %d; i++) context.log("l" + i);
for (let i = 0; i < %d; i++) context.progress("p" + i);
for (let i = 0; i < %d; i++) await step.do("s" + i, () => i);
for (let i = 0; i < %d; i++) await ui.notify("n" + i);
console.log("flooded");
`, logs, progress, steps, notes))})
	took := time.Since(start)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "flooded")

	// The most a channel may deliver in the run's time, with a second of
	// slack for the clocks of the bucket and of this test.
	allowed := func(ch Channel) int {
		l := limitOf(ch)
		return l.Burst + int(float64(l.PerSecond)*(took.Seconds()+1))
	}
	check := func(ch Channel, delivered, sent int) {
		t.Helper()
		dropped, markers := rec.dropped(r.ID(), ch)
		t.Logf("%s: sent %d, delivered %d, dropped %d in %d markers, in %s", ch, sent, delivered, dropped, markers, took.Round(time.Millisecond))
		assert.LessOrEqual(t, delivered, allowed(ch), "%s past its rate", ch)
		assert.Equal(t, sent, delivered+dropped, "%s: every call is delivered or counted", ch)
		if sent > allowed(ch) {
			assert.Positive(t, markers, "%s: a marker says what was dropped", ch)
		}
		assert.LessOrEqual(t, markers, int(took/markerEvery)+2, "%s: markers come at most once a second", ch)
	}
	check(ChannelLog, len(rec.of(r.ID(), EventLog)), logs)
	check(ChannelProgress, len(rec.of(r.ID(), EventProgress)), progress)
	check(ChannelStep, len(rec.of(r.ID(), EventStep)), 2*steps)

	var delivered, dropped, markers int
	for _, n := range rec.notesOf(r.ID()) {
		if m, ok := strings.CutPrefix(n.msg, "[tranquil: "); ok {
			k, err := strconv.Atoi(strings.Fields(m)[0])
			require.NoError(t, err, n.msg)
			dropped += k
			markers++
			assert.Contains(t, n.msg, "ui.notify calls dropped")
			continue
		}
		delivered++
	}
	t.Logf("ui.notify: sent %d, delivered %d, dropped %d in %d markers", notes, delivered, dropped, markers)
	assert.LessOrEqual(t, delivered, allowed(ChannelNotify))
	assert.Equal(t, notes, delivered+dropped)
	assert.Positive(t, markers)
	assert.Contains(t, entry.Output, "context.log calls dropped", "the history keeps the log's marker")
}

// Pane controls: a giant name is refused, registering in a loop meets the
// rate, and what a control returns reaches the host as bounded data: a
// huge value or a function fails (the function is released), a huge
// thrown message is cut.
func TestHostilePaneControls(t *testing.T) {
	e, rec := newHostileEnv(t)
	p := e.script(t, "panes.ts", `// @permissions none
// @timeout none
import { context, paneControls, step } from "tranquil/automation";
try {
  await paneControls.register("n".repeat(20 << 20), () => 1);
  context.log("giant name accepted");
} catch (e) {
  context.log("giant name: " + e.code + " " + e.limit);
}
let refused = 0;
for (let i = 0; i < 300; i++) {
  try {
    await paneControls.register("churn", () => i);
    await paneControls.unregister("churn");
  } catch (e) {
    if (e.code === "limit_exceeded") refused++;
  }
}
context.log("churn refused " + refused);
// The bucket refills at 20 a second: a second gives the five below room.
await new Promise((r) => setTimeout(r, 1000));
await paneControls.register("huge", () => "v".repeat(20 << 20));
let released = 0;
await paneControls.register("fn", () => ({ data: 1, fn: Object.assign(() => 2, { [Symbol.dispose]() { released++; context.log("released " + released); } }) }));
await paneControls.register("throws", () => { throw new Error("m".repeat(20 << 20)); });
await paneControls.register("fine", () => ({ ok: true }));
context.log("ready");
await step.waitForEvent("done", { timeout: 60000 });
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	defer r.Cancel("test over")
	rec.waitLog(t, r.ID(), "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	_, err = e.m.InvokePaneControl(ctx, r.ID(), "huge")
	assert.ErrorIs(t, err, ErrLimitExceeded)
	_, err = e.m.InvokePaneControl(ctx, r.ID(), "fn")
	assert.ErrorIs(t, err, ErrNotSerializable)
	rec.waitLog(t, r.ID(), "released 1")
	_, err = e.m.InvokePaneControl(ctx, r.ID(), "throws")
	var re *capnweb.RemoteError
	require.ErrorAs(t, err, &re)
	assertCut(t, re.Message, MaxLineBytes, 20<<20)
	assert.Nil(t, re.Props)
	assert.Less(t, len(err.Error()), MaxLineBytes+200)
	v, err := e.m.InvokePaneControl(ctx, r.ID(), "fine")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"ok": true}, v)

	require.NoError(t, e.m.SendEvent(ctx, r.ID(), "done", nil))
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "giant name: limit_exceeded 128")
	var churnRefused int
	for _, ev := range rec.of(r.ID(), EventLog) {
		if n, ok := strings.CutPrefix(ev.Line, "churn refused "); ok {
			churnRefused, _ = strconv.Atoi(n)
		}
	}
	assert.Positive(t, churnRefused, "registering in a loop meets the rate")
	for _, ev := range rec.of(r.ID(), EventPaneControls) {
		assert.LessOrEqual(t, len(ev.Line), MaxPaneNameBytes)
	}
	registered := len(rec.of(r.ID(), EventPaneControls))
	assert.LessOrEqual(t, registered, 2*limitOf(ChannelPane).Burst+2*limitOf(ChannelPane).PerSecond*int(entry.Duration.Seconds()+1)+8)
}

// A function inside what a script hands the host (a config value, the
// result, notify's options, a progress report) is refused with code
// not_serializable and never reaches the host: the SDK refuses a config
// value or a result before it leaves (the host's own check of them is
// TestEncodePlainIsJSONStringify and dataJSON's release of stubs), and
// the host releases the function it got in notify's options.
func TestHostileFunctionsAreNotData(t *testing.T) {
	e, rec := newHostileEnv(t)
	r, entry := e.run(t, Request{Script: e.script(t, "fns.ts", `// @permissions none
import { config, context, ui } from "tranquil/automation";
let released = 0;
const all = Promise.withResolvers<void>();
const fn = () => Object.assign(() => 1, { [Symbol.dispose]() { if (++released === 1) all.resolve(); } });
const codes: string[] = [];
for (const [what, call] of [
  ["config", () => config.set("k", { nested: [1, fn()] } as never)],
  ["result", () => context.result({ f: fn() } as never)],
  ["notify", () => ui.notify("hello", { level: fn() as never })],
] as const) {
  try {
    await call();
    codes.push(what + " accepted");
  } catch (e) {
    codes.push(what + " " + e.name + " " + e.code);
  }
}
context.progress({ toString: () => "p" } as never);
await Promise.race([all.promise, new Promise((_, no) => setTimeout(() => no(new Error("released " + released)), 20000))]);
await context.result({ codes, released, stored: (await config.get("k")) ?? null });
`)})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	assert.JSONEq(t, `{"codes":["config TypeError not_serializable","result TypeError not_serializable","notify TypeError not_serializable"],"released":1,"stored":null}`, string(entry.Result))
	assert.Empty(t, rec.notesOf(r.ID()), "the host got no notification")
}

// Nothing a script sends reaches the host after its run's end event:
// calls made as the process exits (an unload handler)
// and calls its session still had queued when the run was cancelled.
func TestHostileNothingAfterTheEnd(t *testing.T) {
	e, rec := newHostileEnv(t)
	exiting := e.script(t, "unload.ts", `// @permissions none
import { context, ui } from "tranquil/automation";
globalThis.addEventListener("unload", () => {
  for (let i = 0; i < 20000; i++) context.log("late " + i);
  for (let i = 0; i < 100; i++) ui.notify("late " + i);
});
context.log("started");
`)
	flooding := e.script(t, "cancelled.ts", `// @permissions none
// @timeout none
import { context } from "tranquil/automation";
context.log("started");
for (;;) {
  for (let i = 0; i < 20000; i++) context.log("flood " + i);
  await new Promise((r) => setTimeout(r, 0));
}
`)
	for range 2 {
		_, entry := e.run(t, Request{Script: exiting})
		require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	}
	r, err := e.m.Start(context.Background(), Request{Script: flooding})
	require.NoError(t, err)
	rec.waitLog(t, r.ID(), "started")
	r.Cancel("test over")
	entry, err := r.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, history.StateCancelled, entry.State)

	// Close waits for every session and its calls: whatever a script
	// sent has reached the host, or never will.
	require.NoError(t, e.m.Close())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	t.Logf("%d events reached the host", len(rec.events))
	assert.Empty(t, rec.late, "%d reached the host after the run's end", len(rec.late))
}

// Values past their limits fail with code limit_exceeded and never reach
// the host: a 2 MiB config value, clipboard text and a 5 KiB path; and
// config.set, ui.open and clipboard.write called in a loop meet their
// rates.
func TestHostileValuesPastTheirLimit(t *testing.T) {
	e, _ := newHostileEnv(t)
	_, entry := e.run(t, Request{Script: e.script(t, "values.ts", `// @permissions clipboard
import { clipboard, config, context, ui } from "tranquil/automation";
const big = "v".repeat(2 << 20);
const seen: Record<string, string> = {};
async function outcome(what: string, f: () => Promise<unknown>) {
  try {
    await f();
    seen[what] = "ok";
  } catch (e) {
    seen[what] = e.name + " " + e.code + " " + e.limit;
  }
}
await outcome("config", () => config.set("big", big));
await outcome("clipboard", () => clipboard.write(big));
await outcome("open", () => ui.open("/" + "p".repeat(5 << 10)));
const refused: Record<string, number> = {};
for (
  const [what, f] of [
    ["config", (i: number) => config.set("k", i)],
    ["open", () => ui.open("/notes.md")],
    ["clipboard", (i: number) => clipboard.write("c" + i)],
  ] as const
) {
  // All at once: config.set waits for the disk, so one at a time would
  // stay under its rate.
  const all = await Promise.allSettled(Array.from({ length: 400 }, (_, i) => f(i)));
  refused[what] = all.filter((o) => o.status === "rejected" && o.reason.code === "limit_exceeded").length;
}
await context.result({ seen, refused, stored: (await config.get("big")) === undefined });
`)})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	var got struct {
		Seen    map[string]string
		Refused map[string]int
		Stored  bool
	}
	require.NoError(t, json.Unmarshal(entry.Result, &got))
	assert.Equal(t, map[string]string{
		"config":    "RangeError limit_exceeded " + strconv.Itoa(MaxConfigValueBytes),
		"clipboard": "RangeError limit_exceeded " + strconv.Itoa(MaxClipboardBytes),
		"open":      "RangeError limit_exceeded " + strconv.Itoa(MaxOpenPathBytes),
	}, got.Seen)
	assert.True(t, got.Stored, "the refused value was not stored")
	for _, ch := range []Channel{ChannelConfig, ChannelOpen, ChannelClipboard} {
		l := limitOf(ch)
		allowed := l.Burst + int(float64(l.PerSecond)*(entry.Duration.Seconds()+1))
		what := strings.SplitN(string(ch), ".", 2)[0]
		if ch == ChannelOpen {
			what = "open"
		}
		t.Logf("%s: %d of 400 refused in %s", ch, got.Refused[what], entry.Duration.Round(time.Millisecond))
		assert.GreaterOrEqual(t, got.Refused[what], 400-allowed, "%s past its rate", ch)
		assert.Positive(t, got.Refused[what], ch)
	}
	e.host.mu.Lock()
	defer e.host.mu.Unlock()
	assert.Less(t, len(e.host.clip), 16, "the host's clipboard never got the big text")
}
