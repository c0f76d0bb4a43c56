package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// TestAttackFramesStayWholeBesideTheSDK runs the "large values" attack
// with each injected frame written in small parts, so that the frame the
// SDK writes on the same socket falls due between them. BenchmarkAttackSoak once saw this attack end with the
// script's own ECONNRESET: a frame of the SDK's (a release it had held
// for a few milliseconds) went out between two parts of an injected
// frame, the host read garbage, aborted for a protocol error before the
// budget and reset the socket under the script's write. The attack must
// end over its memory budget, each time.
func TestAttackFramesStayWholeBesideTheSDK(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.SessionBudget = 32 << 20 })
	// In 16 KiB parts a frame takes 250 writes, each a turn of the
	// event loop: the release the SDK holds for 5 ms after the last call
	// ("ready") falls due inside the first frame.
	const whole = "const injectPart = Infinity;"
	require.Contains(t, rawFrames, whole)
	src := strings.Replace(rawFrames, whole, "const injectPart = 16 << 10;", 1) + memoryAttacks["large values"] +
		"\nawait new Promise((r) => setTimeout(r, 30000));\n"
	script := e.script(t, "attack-beside-sdk.ts", src)
	r, err := e.m.Start(context.Background(), Request{Script: script})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, history.StateFailed, entry.State, "%s\n%s", entry.Reason, entry.Output)
	require.True(t, strings.HasPrefix(entry.Reason, "limit_exceeded: "), "%s\n%s", entry.Reason, entry.Output)
	require.Contains(t, entry.Reason, "memory budget of 32 MiB")
}

// TestScriptWritingWhenAbortedReadsWhy: a script's session aborts (here
// for a frame that is not JSON) while it is still writing a large frame
// on the SDK's socket. The host must take the rest of that frame rather
// than reset the connection, so the SDK answers the abort's close frame
// and the run ends with the host's reason, not with "connection reset" or
// "broken pipe" from a write.
func TestScriptWritingWhenAbortedReadsWhy(t *testing.T) {
	e := newMgr(t, nil)
	script := e.script(t, "aborted-while-writing.ts", rawFrames+`
// A frame that is not JSON, then, once the host has surely aborted, a
// megabyte no frame reader can take: one write in its turn, made in
// parts as a large frame's is. The SDK's answer to the abort waits for
// the turn.
const bad = wsFrame('["push",["not", json]]');
const rest = new Uint8Array(1 << 20).fill(0xff);
const done = turn.then(async () => {
  await write.call(sdkConn, bad);
  await new Promise((r) => setTimeout(r, 300));
  let off = 0;
  while (off < rest.length) off += await write.call(sdkConn, rest.subarray(off, off + (64 << 10)));
});
turn = done.catch(() => {});
try {
  await done;
} catch (e) {
  console.error("the write failed: " + (e as Error).message);
}
await new Promise((r) => setTimeout(r, 30000));
`)
	_, entry := e.run(t, Request{Script: script})
	require.Equal(t, history.StateFailed, entry.State, "%s\n%s", entry.Reason, entry.Output)
	require.Contains(t, entry.Reason, "the host closed the connection (3000 SyntaxError: invalid JSON", entry.Output)
	require.NotContains(t, entry.Output, "the write failed")
}
