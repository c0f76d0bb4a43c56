package wsconn

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// serverFrame builds an unmasked frame with an n-byte payload, or a
// masked one (as a client sends) when masked is set.
func serverFrame(n int, masked bool) []byte {
	var f []byte
	var b1 byte
	if masked {
		b1 = 0x80
	}
	switch {
	case n < 126:
		f = []byte{0x81, b1 | byte(n)}
	case n < 65536:
		f = []byte{0x81, b1 | 126, 0, 0}
		binary.BigEndian.PutUint16(f[2:], uint16(n))
	default:
		f = []byte{0x81, b1 | 127, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	if masked {
		f = append(f, 1, 2, 3, 4)
	}
	return append(f, bytes.Repeat([]byte{'x'}, n)...)
}

// TestFrameCursorFollowsFrames feeds frames of every length encoding in
// random pieces: the cursor is between frames exactly at their ends.
func TestFrameCursorFollowsFrames(t *testing.T) {
	var stream []byte
	ends := map[int]bool{0: true}
	for _, n := range []int{0, 1, 125, 126, 127, 300, 65535, 65536, 70000, 3} {
		for _, masked := range []bool{false, true} {
			stream = append(stream, serverFrame(n, masked)...)
			ends[len(stream)] = true
		}
	}
	stream = append(stream, pongFrame...)
	ends[len(stream)] = true

	for round := range 20 {
		var c frameCursor
		rng := rand.New(rand.NewPCG(uint64(round), 1))
		for off := 0; off < len(stream); {
			n := 1 + rng.IntN(9)
			if round%2 == 1 {
				n = 1 + rng.IntN(70000)
			}
			n = min(n, len(stream)-off)
			c.advance(stream[off : off+n])
			off += n
			if ends[off] != c.between() {
				t.Fatalf("round %d, after %d bytes: between() = %v", round, off, c.between())
			}
		}
	}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	b := <-accepted
	require.NotNil(t, b)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestPongAcknowledgesOnlyBetweenFrames checks the pong a connection
// without TCP_QUICKACK sends for data it has no reply for: one empty pong
// once it is a WebSocket, never inside a frame being written, and none
// when a write already carried the acknowledgement.
func TestPongAcknowledgesOnlyBetweenFrames(t *testing.T) {
	srv, peer := tcpPair(t)
	tc := tune(srv, TuneOptions{NoQuickAck: true}).(*tunedConn)
	require.False(t, tc.quickAck)
	buf := make([]byte, 64)
	// expect reads exactly want from the peer and nothing more.
	expect := func(want []byte) {
		t.Helper()
		got := make([]byte, len(want)+1)
		require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, err := peer.Read(got)
		for err == nil && n < len(want) {
			var m int
			m, err = peer.Read(got[n:])
			n += m
		}
		require.NoError(t, err)
		require.Equal(t, want, got[:n])
	}
	readOne := func() {
		t.Helper()
		_, err := peer.Write([]byte("a"))
		require.NoError(t, err)
		_, err = tc.Read(buf)
		require.NoError(t, err)
		require.True(t, tc.unacked.Load())
	}

	// Before the upgrade the bytes are HTTP: no pong.
	readOne()
	tc.ack()
	_, err := tc.Write([]byte("HTTP"))
	require.NoError(t, err)
	expect([]byte("HTTP"))

	tc.startFrames()
	readOne()
	tc.ack()
	expect(pongFrame)

	// Half a frame is out: the pong would corrupt it, and the rest of
	// the frame carries the acknowledgement anyway.
	frame := serverFrame(300, false)
	_, err = tc.Write(frame[:3])
	require.NoError(t, err)
	readOne()
	tc.ack()
	_, err = tc.Write(frame[3:])
	require.NoError(t, err)
	require.False(t, tc.unacked.Load(), "the write carried the acknowledgement")
	expect(frame)

	// Inside a batch the pong waits for the batch's flush.
	readOne()
	tc.cork()
	tc.ack()
	_, err = tc.Write(serverFrame(2, false))
	require.NoError(t, err)
	require.NoError(t, tc.uncork())
	expect(append(append([]byte{}, pongFrame...), serverFrame(2, false)...))
}

// TestStockDenoClientDoesNotStall runs Deno's own WebSocket against a
// server that leaves frames unanswered the way Cap'n Web's pull and
// release are: the client's next frame must not wait for a delayed ACK,
// with TCP_QUICKACK and with the pong alone, and the unsolicited pongs
// must not disturb the client.
func TestStockDenoClientDoesNotStall(t *testing.T) {
	testenv.CheckGoroutines(t)
	deno := testenv.Deno(t)
	script := filepath.Join(t.TempDir(), "client.ts")
	require.NoError(t, os.WriteFile(script, []byte(`
const ws = new WebSocket(Deno.args[0]);
await new Promise((resolve, reject) => {
  ws.onopen = resolve;
  ws.onerror = reject;
});
let next: (m: string) => void = () => {};
ws.onmessage = (e) => next(e.data);
ws.onclose = (e) => { console.error("closed", e.code); Deno.exit(1); };
const times: number[] = [];
for (let i = 0; i < 60; i++) {
  const t = performance.now();
  const got = new Promise<string>((r) => next = r);
  ws.send("quiet " + i); // no reply: only an acknowledgement releases the next frame
  ws.send("echo " + i);
  if (await got !== "echo " + i) throw new Error("out of order");
  times.push(performance.now() - t);
}
console.log(JSON.stringify(times));
Deno.exit(0);
`), 0o644))

	for _, opts := range []TuneOptions{{}, {NoQuickAck: true}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws, err := Accept(w, r, nil, 1<<20)
			if err != nil {
				return
			}
			c := ws.Conn()
			defer c.CloseNow()
			for {
				_, msg, err := c.Read(r.Context())
				if err != nil {
					return
				}
				if bytes.HasPrefix(msg, []byte("echo ")) {
					if err := c.Write(r.Context(), websocket.MessageText, msg); err != nil {
						return
					}
				}
			}
		})}
		go srv.Serve(TuneListener(ln, &opts))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, deno, "run", "--allow-net=127.0.0.1", script, "ws://"+ln.Addr().String()+"/").CombinedOutput()
		cancel()
		srv.Close()
		require.NoError(t, err, "%s", out)
		var times []float64
		require.NoError(t, json.Unmarshal(out, &times), "%s", out)
		sort.Float64s(times)
		t.Logf("%+v: p50 %.3f ms, max %.3f ms", opts, times[len(times)/2], times[len(times)-1])
		// A delayed ACK costs 40 ms a round; a loaded machine, a few ms.
		require.Less(t, times[len(times)/2], 10.0, "%+v: rounds wait for a delayed ACK", opts)
	}
}
