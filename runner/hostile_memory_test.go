package runner

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
)

// rawFrames is the start of a script declaring nothing that speaks the
// bridge's protocol itself: every run may connect to the bridge's address,
// which gives it the class of the SDK's socket, whose write it wraps to
// take the SDK's own authenticated connection. inject then sends any
// Cap'n Web frame on it, as a hostile script could.
const rawFrames = `// @permissions none
// @timeout 60s
import { context } from "tranquil/automation";
const u = new URL(Deno.env.get("TRANQUIL_RPC_URL")!);
const probe = await Deno.connect({ hostname: "127.0.0.1", port: Number(u.port) });
const proto = Object.getPrototypeOf(probe);
probe.close();
let sdkConn: Deno.Conn | undefined;
const write = proto.write;
// A write takes what the socket has room for, so a frame may leave in
// parts; the SDK's frames and inject's take turns, each written whole, or
// a frame of one inside a frame of the other is garbage to the host.
let turn: Promise<unknown> = Promise.resolve();
function writeWhole(c: Deno.Conn, b: Uint8Array, part = Infinity): Promise<number> {
  const done = turn.then(async () => {
    let off = 0;
    while (off < b.length) off += await write.call(c, b.subarray(off, off + part));
    return b.length;
  });
  turn = done.catch(() => {});
  return done;
}
proto.write = function (this: Deno.Conn, b: Uint8Array) {
  sdkConn ??= this;
  return this === sdkConn ? writeWhole(this, b) : write.call(this, b);
};
await context.result("ready"); // push 2 (the payload read at start is push 1)
if (!sdkConn) throw new Error("no connection captured");
const enc = new TextEncoder();
function wsFrame(frame: string): Uint8Array {
  const payload = enc.encode(frame);
  const n = payload.length;
  const head = n < 126 ? [0x81, 0x80 | n] : n < 65536 ? [0x81, 0x80 | 126, n >> 8, n & 255]
    : [0x81, 0x80 | 127, 0, 0, 0, 0, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const mask = [1, 2, 3, 4];
  const out = new Uint8Array(head.length + 4 + n);
  out.set(head);
  out.set(mask, head.length);
  for (let i = 0; i < n; i++) out[head.length + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}
// injectPart is the most one write of inject hands the socket; a test
// makes it small so that the SDK's own writes fall due inside a frame.
const injectPart = Infinity;
async function inject(...frames: string[]) {
  const parts = frames.map(wsFrame);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), at += p.length;
  await writeWhole(sdkConn!, out, injectPart);
}
const el = JSON.stringify("x".repeat(100));
// Push 3: an array of 40,000 strings, about 4.6 MiB.
await inject('["push",[[' + Array(40000).fill(el).join(",") + ']]]');
const refs = (r: string, n: number) => Array(n).fill(r).join(",");
`

// memoryAttacks are frames of a few dozen bytes each that name push 3 over
// and over: every message that names another value.
var memoryAttacks = map[string]string{
	"import":         `await inject('["push",[[' + refs('["import",3]', 4000) + ']]]');`,
	"pipeline":       `for (let i = 0; i < 4000; i++) await inject('["push",["pipeline",3]]');`,
	"call arguments": `for (let i = 0; i < 4000; i++) await inject('["push",["pipeline",0,["context","log"],[["import",3]]]]');`,
	"remap":          `await inject('["push",["remap",3,[],[["import",3]],[["import",-1]]]]');`,
	"nested":         `for (let i = 3; i < 40; i++) await inject('["push",[[["import",' + i + '],["import",' + i + ']]]]');`,
	"object":         `await inject('["push",{' + Array.from({length: 4000}, (_, i) => '"k' + i + '":["import",3]').join(",") + '}]');`,
	// Floods: values never released, large and tiny.
	"large values": `for (let i = 0; i < 20; i++) await inject('["push",[[' + Array(40000).fill(el).join(",") + ']]]');`,
	"tiny pushes":  `for (let i = 0; i < 40; i++) await inject(...Array(10000).fill('["push",["pipeline",0,["context"]]]'));`,
}

// sampleHeap samples the heap every millisecond until the returned
// function is called, which returns its peak growth over the start.
func sampleHeap() func() int64 { return testenv.PeakOf(testenv.HeapObjects) }

// TestHostileMemoryThroughTheBridge runs scripts that declare nothing and
// send frames naming a large value thousands of times. Each run fails
// limit_exceeded, naming the memory budget, while a benign run beside it
// succeeds, and the host's heap stays within a few budgets throughout.
func TestHostileMemoryThroughTheBridge(t *testing.T) {
	const budget = 32 << 20
	e := newMgr(t, func(c *Config) { c.SessionBudget = budget })
	benign := e.script(t, "benign.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\ncontext.log(\"still here\");\nawait context.result({ ok: true });\n")

	heapGrowth := sampleHeap()
	for name, attack := range memoryAttacks {
		t.Run(name, func(t *testing.T) {
			script := e.script(t, "attack-"+strings.ReplaceAll(name, " ", "-")+".ts", rawFrames+attack+"\nawait new Promise((r) => setTimeout(r, 30000));\n")
			r, err := e.m.Start(context.Background(), Request{Script: script})
			require.NoError(t, err)
			_, ok := e.run(t, Request{Script: benign})
			require.Equal(t, history.StateSucceeded, ok.State, "a benign run beside the attack: %s %s", ok.Reason, ok.Output)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			entry, err := r.Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, history.StateFailed, entry.State, "%s\n%s", entry.Reason, entry.Output)
			require.True(t, strings.HasPrefix(entry.Reason, "limit_exceeded: "), entry.Reason)
			require.Contains(t, entry.Reason, "memory budget of 32 MiB")
			t.Log(entry.Reason)
		})
	}
	grown := heapGrowth()
	t.Logf("host heap peak: %+d MiB over the start", grown>>20)
	// Each attack names gigabytes; the host may build at most its budget
	// per session, plus what the collector has not yet reclaimed.
	require.Less(t, grown, int64(8*budget), "the host's heap grew past a few budgets")
	_, ok := e.run(t, Request{Script: benign})
	require.Equal(t, history.StateSucceeded, ok.State)
}

// TestHostCutsWhatTheSDKWouldHave sends context.log and ui.notify calls
// with 2 MiB of text straight onto the connection, past the SDK, which
// cuts text before sending it: the host cuts them itself.
func TestHostCutsWhatTheSDKWouldHave(t *testing.T) {
	e, rec := newHostileEnv(t)
	const n = 2 << 20
	r, entry := e.run(t, Request{Script: e.script(t, "raw-text.ts", rawFrames+`
const big = JSON.stringify("y".repeat(`+strconv.Itoa(n)+`));
await inject('["push",["pipeline",0,["context","log"],[' + big + ']]]');
await inject('["push",["pipeline",0,["ui","notify"],[' + big + ',{"level":"info"}]]]');
await context.result("sent"); // after both: the host has handled them
`)})
	require.Equal(t, history.StateSucceeded, entry.State, "%s %s", entry.Reason, entry.Output)
	logs := rec.of(r.ID(), EventLog)
	require.Len(t, logs, 1)
	assertCut(t, logs[0].Line, MaxLineBytes, n)
	notes := rec.notesOf(r.ID())
	require.Len(t, notes, 1)
	assertCut(t, notes[0].msg, MaxLineBytes, n)
}
