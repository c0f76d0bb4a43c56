package wsconn

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/rpc/capnweb"
)

// abortServer serves sessions with a small memory budget on a loopback
// listener tuned with opts. Each session's end goes to ended: its error,
// and how long the transport took to close after the session ended.
func abortServer(t *testing.T, opts TuneOptions) (addr string, ended <-chan sessionEnd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	out := make(chan sessionEnd, 4)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := Accept(w, r, nil, 32<<20)
		if err != nil {
			return
		}
		s, err := capnweb.NewSession(ws, bulkAPI{}, &capnweb.Options{MaxMemory: 256 << 10})
		if err != nil {
			return
		}
		<-s.Done()
		at := time.Now()
		s.Close() // waits for the writer, which closes the transport
		out <- sessionEnd{err: s.Err(), closing: time.Since(at)}
	})}
	go srv.Serve(TuneListener(ln, &opts))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), out
}

type sessionEnd struct {
	err     error
	closing time.Duration
}

// rawClient is a WebSocket client on a plain TCP connection, so that a
// test decides when it writes and when it reads, as a script writing
// frames on the SDK's socket does.
type rawClient struct {
	c  *net.TCPConn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tc := c.(*net.TCPConn)
	// A small send buffer: the client's writes wait on the host's reads,
	// as a large frame's do.
	require.NoError(t, tc.SetWriteBuffer(16<<10))
	_, err = fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr)
	require.NoError(t, err)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	return &rawClient{c: tc, br: br}
}

// frame is a masked client text frame.
func clientFrame(payload string) []byte {
	n := len(payload)
	head := []byte{0x81}
	switch {
	case n < 126:
		head = append(head, 0x80|byte(n))
	case n < 1<<16:
		head = append(head, 0x80|126, byte(n>>8), byte(n))
	default:
		head = append(head, 0x80|127)
		head = binary.BigEndian.AppendUint64(head, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	out := append(head, mask[:]...)
	for i := range n {
		out = append(out, payload[i]^mask[i&3])
	}
	return out
}

// readFrame reads the next unmasked server frame that is not a ping or a
// pong: a host may send those at any time (where it cannot ask the system
// for a quick ACK, a tuned connection pongs), and a client skips them.
func (rc *rawClient) readFrame() (op byte, payload []byte, err error) {
	for {
		op, payload, err = rc.readAnyFrame()
		if err != nil || (op != 0x9 && op != 0xa) {
			return op, payload, err
		}
	}
}

// readAnyFrame reads one unmasked server frame.
func (rc *rawClient) readAnyFrame() (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(rc.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(rc.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(rc.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(rc.br, payload)
	return h[0] & 0x0f, payload, err
}

// junk stands for the rest of a frame whose head went astray: bytes the
// host cannot read as frames.
func junk(n int) []byte { return []byte(strings.Repeat("\xff", n)) }

// overBudget is a push whose value is past the servers' memory budget.
var overBudget = clientFrame(`["push",[["` + strings.Repeat("x", 1<<20) + `"]]]`)

// TestAbortedPeerStillWritingReadsWhy aborts a session for its memory
// budget while the client goes on writing, bytes the host cannot parse as
// frames (what a frame split by another frame looks like), and reads only
// then. The host must let those writes land, and the client read the
// abort, the close frame and an orderly end: a host that closes at once,
// with unread bytes in its buffer, resets the connection, and the client
// sees "connection reset" (its write fails, or its read) instead of why
// the host ended the session.
func TestAbortedPeerStillWritingReadsWhy(t *testing.T) {
	testenv.CheckGoroutines(t)
	addr, ended := abortServer(t, TuneOptions{Linger: 10 * time.Second, LingerBytes: 64 << 20})
	rc := dialRaw(t, addr)
	_, err := rc.c.Write(overBudget)
	require.NoError(t, err)
	const total = 8 << 20
	chunk := junk(64 << 10)
	for sent := 0; sent < total; sent += len(chunk) {
		_, err := rc.c.Write(chunk)
		require.NoError(t, err, "write after %d bytes: the host reset the connection before its reason was read", sent)
	}

	op, msg, err := rc.readFrame()
	require.NoError(t, err, "reading the abort")
	require.Equal(t, byte(0x1), op)
	require.Contains(t, string(msg), `["abort",`)
	require.Contains(t, string(msg), "memory budget")
	op, msg, err = rc.readFrame()
	require.NoError(t, err, "reading the close frame")
	require.Equal(t, byte(0x8), op)
	require.Equal(t, uint16(StatusAbort), binary.BigEndian.Uint16(msg))
	_, _, err = rc.readFrame()
	require.ErrorIs(t, err, io.EOF, "the host ends its side in order (FIN), not with a reset")

	at := time.Now()
	rc.c.Close()
	end := <-ended
	require.ErrorIs(t, end.err, capnweb.ErrLimit)
	require.Less(t, time.Since(at), 2*time.Second, "the host stops reading once the client has closed")
}

// TestLingerIsBounded: after an abort the host reads what the peer still
// sends for LingerBytes and Linger at most, then closes whatever the peer
// does. A peer that never stops writing is cut off after LingerBytes; a
// peer that answers the close frame but then neither writes nor closes,
// after Linger.
func TestLingerIsBounded(t *testing.T) {
	testenv.CheckGoroutines(t)
	const linger = 300 * time.Millisecond
	addr, ended := abortServer(t, TuneOptions{Linger: linger, LingerBytes: 1 << 20})

	t.Run("bytes", func(t *testing.T) {
		rc := dialRaw(t, addr)
		_, err := rc.c.Write(overBudget)
		require.NoError(t, err)
		var sent atomic.Int64
		wrote := make(chan error, 1)
		go func() {
			chunk := junk(64 << 10)
			for sent.Load() < 256<<20 {
				n, err := rc.c.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					wrote <- err
					return
				}
			}
			wrote <- errors.New("the host read 256 MiB")
		}()
		end := <-ended
		require.ErrorIs(t, end.err, capnweb.ErrLimit)
		require.Less(t, end.closing, linger, "cut off by bytes, before the time bound")
		err = <-wrote
		require.NotContains(t, err.Error(), "256 MiB")
		t.Logf("the client wrote %d KiB after the abort: %v", sent.Load()>>10, err)
	})

	t.Run("time", func(t *testing.T) {
		rc := dialRaw(t, addr)
		_, err := rc.c.Write(overBudget)
		require.NoError(t, err)
		for op := byte(0); op != 0x8; {
			op, _, err = rc.readFrame()
			require.NoError(t, err)
		}
		closeFrame := clientFrame("\x0b\xb8")
		closeFrame[0] = 0x88
		_, err = rc.c.Write(closeFrame)
		require.NoError(t, err)
		end := <-ended // the client neither writes nor closes
		require.ErrorIs(t, end.err, capnweb.ErrLimit)
		require.GreaterOrEqual(t, end.closing, linger-50*time.Millisecond)
		require.Less(t, end.closing, linger+2*time.Second)
	})
}

// TestOrdinaryCloseDoesNotLinger: a client that ends its session the
// ordinary way is not kept waiting, nor is the host.
func TestOrdinaryCloseDoesNotLinger(t *testing.T) {
	testenv.CheckGoroutines(t)
	addr, ended := abortServer(t, TuneOptions{Linger: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := Dial(ctx, "ws://"+addr+"/", 1<<20)
	require.NoError(t, err)
	client, err := capnweb.NewSession(ws, nil, nil)
	require.NoError(t, err)
	_, err = client.Main().CallMethod(ctx, "echo", "hi")
	require.NoError(t, err)
	at := time.Now()
	require.NoError(t, client.Close())
	end := <-ended
	require.Less(t, time.Since(at), 2*time.Second)
	require.Less(t, end.closing, 2*time.Second)
}
