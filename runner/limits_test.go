package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/winetest"
	"github.com/tranquil/automation/runner/internal/proc"
)

// bigBuffers asks for 2 GiB in ArrayBuffers, which live outside V8's heap
// (and, never written, cost the machine nothing but address space).
const bigBuffers = `// @permissions none
const bufs = [];
for (let i = 0; i < 32; i++) bufs.push(new ArrayBuffer(64 << 20));
console.log("allocated " + bufs.length * 64 + " MiB outside the heap");
`

// The default limit (heap + 1 GiB) stops memory the heap cap does not see,
// and the history says the run ran out of memory.
func TestMemoryLimitStopsMemoryOutsideTheHeap(t *testing.T) {
	if !proc.MemoryEnforced {
		t.Skipf("a run's memory is not limited on %s", runtime.GOOS)
	}
	e := newMgr(t, nil)
	require.Equal(t, DefaultHeapMB+DefaultMemoryHeadroomMB, e.m.cfg.MemoryMB)
	entry := e.runScript(t, "buffers.ts", bigBuffers)
	if winetest.Wine() && entry.State == history.StateSucceeded {
		t.Skipf("%s: %s", winetest.NoJobMemoryLimit, entry.Output)
	}
	require.Equal(t, history.StateFailed, entry.State, entry.Output)
	assert.NotContains(t, entry.Output, "allocated 2048 MiB")
	assert.True(t, strings.HasPrefix(entry.Reason, "out of memory: the run reached its memory limit (JavaScript heap 1024 MiB, process 2048 MiB)"), entry.Reason)
	assert.Contains(t, entry.Reason, "Array buffer allocation failed")

	// A script may catch the refusal and go on.
	entry = e.runScript(t, "caught.ts", `// @permissions none
const bufs = [];
try {
  for (;;) bufs.push(new ArrayBuffer(64 << 20));
} catch (e) {
  console.log("refused after " + bufs.length * 64 + " MiB: " + e.name);
}
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "MiB: RangeError")
	got, err := strconv.Atoi(strings.Fields(strings.TrimPrefix(entry.Output, "refused after "))[0])
	require.NoError(t, err, entry.Output)
	assert.Less(t, got, 2048)
	assert.Greater(t, got, 512, "a normal amount of memory stays available")
}

// MemoryMB sets the limit; negative switches it off; too small is refused.
func TestMemoryMB(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.MemoryMB = -1 })
	entry := e.runScript(t, "buffers.ts", bigBuffers)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "allocated 2048 MiB")

	_, err := New(Config{DataDir: t.TempDir(), DenoPath: e.m.deno, MemoryMB: 512})
	require.ErrorIs(t, err, ErrMemoryLimit)
	assert.Contains(t, err.Error(), "below 768")
}

// A run that reaches its heap cap gets the same clear reason.
func TestHeapOutOfMemoryReason(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.HeapMB = 64 })
	entry := e.runScript(t, "heap.ts", `// @permissions none
const keep = [];
for (;;) keep.push({ n: Math.random(), s: "x" + Math.random() });
`)
	require.Equal(t, history.StateFailed, entry.State, entry.Output)
	assert.True(t, strings.HasPrefix(entry.Reason, "out of memory: the run reached its memory limit (JavaScript heap 64 MiB"), entry.Reason)
	assert.Contains(t, entry.Reason, "Fatal JavaScript out of memory")
}

// A run holds at most MaxPaneControls; the next is refused with a typed
// error, while replacing one and registering after an unregister work.
func TestPaneControlsBounded(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "panes.ts", `// @permissions none
import { paneControls } from "tranquil/automation";
const max = `+strconv.Itoa(MaxPaneControls)+`;
for (let i = 0; i < max; i++) await paneControls.register("c" + i, () => i);
try {
  await paneControls.register("one too many", () => 0);
  console.log("accepted");
} catch (e) {
  console.log("refused: " + e.name + " " + e.code + " " + e.limit + ": " + e.message);
}
await paneControls.register("c0", () => "replaced");
await paneControls.unregister("c1");
await paneControls.register("after unregister", () => 1);
console.log("still fine");
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "refused: RangeError limit_exceeded 64: ")
	assert.NotContains(t, entry.Output, "accepted")
	assert.Contains(t, entry.Output, "still fine")
	var registered int
	e.mu.Lock()
	for _, ev := range e.events {
		if ev.Kind == EventPaneControls && ev.Stream == "register" {
			registered++
		}
	}
	e.mu.Unlock()
	assert.Equal(t, MaxPaneControls+2, registered, "the refused control never reached the host")
}

// context.result takes up to MaxResultBytes of JSON; a larger value is
// refused with a typed error and the earlier result stays.
func TestResultBounded(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "result.ts", `// @permissions none
import { context } from "tranquil/automation";
const max = `+strconv.Itoa(MaxResultBytes)+`;
await context.result("x".repeat(max - 2));
try {
  await context.result("y".repeat(25 << 20));
  console.log("accepted");
} catch (e) {
  console.log("refused: " + e.name + " " + e.code + " " + e.limit);
}
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "refused: RangeError limit_exceeded 1048576")
	assert.NotContains(t, entry.Output, "accepted")
	assert.Len(t, entry.Result, MaxResultBytes, "the result at the limit stays")
	assert.Equal(t, byte('x'), entry.Result[1])
}

// Each Web Worker is an isolate of its own, and V8 reserves its code space
// writable: under the default limit a script still starts a worker, and
// does real work in it.
func TestMemoryLimitLeavesRoomForAWorker(t *testing.T) {
	if !proc.MemoryEnforced {
		t.Skipf("a run's memory is not limited on %s", runtime.GOOS)
	}
	e := newMgr(t, nil)
	entry := e.runScript(t, "worker.ts", `// @permissions none
const src = "const a = new Uint8Array(8 << 20).fill(7); postMessage(a.reduce((s, x) => s + x, 0));";
const w = new Worker(URL.createObjectURL(new Blob([src], { type: "application/javascript" })), { type: "module" });
console.log("worker summed " + await new Promise((resolve) => { w.onmessage = (ev) => resolve(ev.data); }));
w.terminate();
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	assert.Contains(t, entry.Output, "worker summed "+strconv.Itoa(7*8<<20))
}

// The guide's Limits section has a row for every channel of
// ChannelLimits, with its size, its rate and what a script sees past them.
func TestLimitsAreInTheGuide(t *testing.T) {
	data, err := sdkFS.ReadFile("sdk/writing-automations.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## 7. Limits\n")
	require.True(t, ok, "the guide has no Limits section")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[Channel]string{
		ChannelLog:        "| `context.log` line",
		ChannelProgress:   "| `context.progress` message",
		ChannelStep:       "| `step` reports",
		ChannelNotify:     "| `ui.notify` message",
		ChannelResult:     "| `context.result` value",
		ChannelOpen:       "| `ui.open` path",
		ChannelClipboard:  "| `clipboard.write` text",
		ChannelConfig:     "| `config.set` value",
		ChannelPane:       "| `paneControls.register`",
		ChannelPaneResult: "| what a pane control's action returns",
	}
	size := func(n int) string {
		switch {
		case n >= 1<<20 && n%(1<<20) == 0:
			return strconv.Itoa(n>>20) + " MiB"
		case n >= 1<<10 && n%(1<<10) == 0:
			return strconv.Itoa(n>>10) + " KiB"
		}
		return strconv.Itoa(n) + " bytes"
	}
	for _, l := range ChannelLimits() {
		prefix, ok := rows[l.Channel]
		require.True(t, ok, "no row named for %s", l.Channel)
		i := strings.Index(section, "\n"+prefix)
		require.GreaterOrEqual(t, i, 0, "the guide has no row for %s", l.Channel)
		row, _, _ := strings.Cut(section[i+1:], "\n")
		assert.Contains(t, row, size(l.MaxBytes), l.Channel)
		if l.PerSecond > 0 {
			assert.Contains(t, row, fmt.Sprintf("%d a second, %d at once", l.PerSecond, l.Burst), l.Channel)
		} else {
			assert.NotContains(t, row, "a second", l.Channel)
		}
		if l.Cut {
			assert.Contains(t, row, "cut", l.Channel)
		}
		if l.Drop {
			assert.Contains(t, row, "dropped", l.Channel)
		}
		if (!l.Cut || (l.PerSecond > 0 && !l.Drop)) && l.Channel != ChannelPaneResult {
			assert.Contains(t, row, "`limit_exceeded`", l.Channel)
		}
	}
}

// The guide's "What a run may cost the app" table has a row for every
// entry of Costs, with its limit in the guide's words.
func TestCostsAreInTheGuide(t *testing.T) {
	data, err := sdkFS.ReadFile("sdk/writing-automations.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n### What a run may cost the app\n")
	require.True(t, ok, "the guide has no section on what a run may cost")
	section, _, _ = strings.Cut(section, "\n#")
	words := func(c Cost) string {
		if c.Unit != "bytes" && !strings.HasPrefix(c.Unit, "bytes ") {
			return strconv.FormatInt(c.Limit, 10) + " "
		}
		switch {
		case c.Limit >= 1<<20 && c.Limit%(1<<20) == 0:
			return strconv.FormatInt(c.Limit>>20, 10) + " MiB"
		case c.Limit >= 1<<10 && c.Limit%(1<<10) == 0:
			return strconv.FormatInt(c.Limit>>10, 10) + " KiB"
		}
		return strconv.FormatInt(c.Limit, 10) + " bytes"
	}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| what ") && !strings.HasPrefix(line, "| -") {
			rows++
		}
	}
	require.Equal(t, len(Costs()), rows, "one row per cost")
	for _, c := range Costs() {
		i := strings.Index(section, "\n| "+c.Resource+" ")
		require.GreaterOrEqual(t, i, 0, "the guide has no row for %s", c.Resource)
		row, _, _ := strings.Cut(section[i+1:], "\n")
		assert.Contains(t, row, words(c), c.Resource)
		if strings.Contains(c.Past, "limit_exceeded") {
			assert.Contains(t, row, "limit_exceeded", c.Resource)
		}
	}
}

// A run's checks take turns at its rate however many ask at once, a turn
// given up (its call ended) is given back, and a rate below one paces
// nothing; the turns given are counted.
func TestCheckPacerHoldsItsRate(t *testing.T) {
	free := newCheckPacer(-1)
	for range 1000 {
		require.NoError(t, free.Turn(context.Background()))
	}
	require.EqualValues(t, 1000, free.turns.Load(), "unpaced turns are counted")
	const rate = 200
	p := newCheckPacer(rate)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var turns atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p.Turn(ctx) == nil {
				turns.Add(1)
			}
		}()
	}
	wg.Wait()
	// Half a second at 200 a second, plus the quarter second of burst.
	assert.InDelta(t, rate*3/4, turns.Load(), rate/8, "turns in 0.5 s")
	assert.Equal(t, turns.Load(), p.turns.Load(), "the turns given are counted")
	// Every turn the 50 callers were waiting for when ctx ended went back:
	// the next is due within a turn's interval, not 50 of them.
	start := time.Now()
	require.NoError(t, p.Turn(context.Background()))
	assert.Less(t, time.Since(start), 300*time.Millisecond, "the given-up turns left no debt")
}

// A result or a config value is kept as JSON.stringify would keep it: an
// undefined member left out, an undefined element null (they were refused,
// "config values must be plain JSON: capnweb.Undefined", for a result
// too); what JSON cannot hold is refused in the script's terms, by the SDK
// before it leaves (a Map was capnweb's "Cannot serialize value", without
// a code) and by the host for a script that goes around the SDK
// (TestEncodePlainIsJSONStringify).
func TestResultAndConfigKeepJSON(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "json.ts", `// @permissions none
import { config, context } from "tranquil/automation";
const value = { a: 1, gone: undefined, list: [1, undefined, { b: undefined, c: "x" }] };
await config.set("k", value);
await config.set("n", null);
const out = { config: await config.get("k"), refused: [], stored: [await config.get("n") === null, await config.get("missing") === undefined] };
for (const bad of [10n, NaN, new Date(0), undefined]) {
  try {
    await config.set("bad", bad);
    out.refused.push("accepted");
  } catch (e) {
    out.refused.push(e.code + ": " + e.message);
  }
}
await context.result({ ...out, direct: value });
`)
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	var got struct {
		Config, Direct json.RawMessage
		Refused        []string
		Stored         []any
	}
	require.NoError(t, json.Unmarshal(entry.Result, &got), string(entry.Result))
	want := `{"a":1,"list":[1,null,{"c":"x"}]}`
	assert.JSONEq(t, want, string(got.Config))
	assert.JSONEq(t, want, string(got.Direct))
	assert.Equal(t, []any{true, true}, got.Stored, "a stored null reads null, a missing key undefined")
	require.Len(t, got.Refused, 4)
	for i, what := range []string{"bigint", "NaN", "Date", "undefined"} {
		assert.True(t, strings.HasPrefix(got.Refused[i], "not_serializable: config.set: the value is "), got.Refused[i])
		assert.Contains(t, got.Refused[i], what)
		assert.NotContains(t, got.Refused[i], "capnweb", "Go's names stay out of a script's errors")
	}
}
