package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// flooder is a script that floods the bridge with silent WebSocket
// upgrades on the shared path, as fast as deno can, and never sends AUTH.
// Every run may reach the bridge's address, so any script can do this.
const flooder = `// @permissions none
// @timeout none
const u = new URL(Deno.env.get("TRANQUIL_RPC_URL")!);
const port = Number(u.port);
const shared = u.pathname.replace(/\/[0-9a-f]{32}$/, "");
const req = new TextEncoder().encode(
  "GET " + shared + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUpgrade: websocket\r\n" +
    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
);
let open = 0, made = 0, failed = 0, why = "";
async function one() {
  open++;
  let c: Deno.Conn | undefined;
  try {
    c = await Deno.connect({ hostname: "127.0.0.1", port });
    made++;
    await c.write(req);
    const buf = new Uint8Array(4096);
    while ((await c.read(buf)) !== null) { /* until the bridge drops us */ }
  } catch (e) {
    failed++, why = String(e);
  } finally {
    open--;
    try { c?.close(); } catch { /* already closed */ }
  }
}
setInterval(() => console.log("flooding: made " + made + ", open " + open + ", failed " + failed + " " + why), 250);
while (true) {
  // Enough open at once to keep the shared table (256) full, without
  // churning so fast that the flood starves the machine rather than the
  // table, which is what the test is about.
  while (open < 300) one();
  await new Promise((r) => setTimeout(r, 5));
}
`

// TestBridgeFloodCannotStopAnotherRun runs a script that floods the bridge
// with silent handshakes far past its pending bound, and starts real runs
// meanwhile: each still reaches the host and succeeds.
func TestBridgeFloodCannotStopAnotherRun(t *testing.T) {
	flooding := make(chan struct{})
	e := newMgr(t, func(c *Config) {
		next := c.OnEvent
		c.OnEvent = func(ev Event) {
			if ev.Kind == EventOutput && strings.Contains(ev.Line, "flooding: made") {
				select {
				case <-flooding:
				default:
					close(flooding)
				}
			}
			next(ev)
		}
	})
	// Two flooders: enough to evict a handshake on a shared table within a
	// few runs, not so many that the machine itself stalls.
	var floods []*Run
	for i := range 2 {
		f, err := e.m.Start(context.Background(), Request{Script: e.script(t, fmt.Sprintf("flood%d.ts", i), flooder)})
		require.NoError(t, err)
		defer f.Cancel("test over")
		floods = append(floods, f)
	}
	select {
	case <-flooding:
	case <-floods[0].Done():
		entry, _ := floods[0].Wait(context.Background())
		t.Fatalf("the flooder ended: %s %s", entry.Reason, entry.Output)
	case <-time.After(30 * time.Second):
		t.Fatal("the flooder never got going")
	}
	require.Eventually(t, func() bool { return e.m.Bridge().Stats().Pending >= 200 }, 10*time.Second, time.Millisecond, "the shared pending table is full")

	victim := e.script(t, "victim.ts", "// @permissions clipboard\nimport { clipboard } from \"tranquil/automation\";\nconsole.log(\"got\", await clipboard.read());\n")
	for i := range 8 {
		_, entry := e.run(t, Request{Script: victim})
		require.Equal(t, history.StateSucceeded, entry.State, "run %d: %s %s", i, entry.Reason, entry.Output)
		assert.Contains(t, entry.Output, "got copied text", fmt.Sprint(i))
	}
	e.mu.Lock()
	last := ""
	for _, ev := range e.events {
		if ev.RunID == floods[0].ID() && ev.Kind == EventOutput {
			last = ev.Line
		}
	}
	e.mu.Unlock()
	t.Log("first flooder:", last)
	for _, f := range floods {
		assert.Equal(t, history.StateRunning, f.State(), "the flood went on throughout")
	}
}
