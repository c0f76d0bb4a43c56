package wsconn

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/rpc/capnweb"
)

// TestUncorkNoWaitKeepsTheRest fills a socket nobody reads: the no-wait
// flush takes what fits and keeps the rest, which the next blocking flush
// sends, in order and whole.
func TestUncorkNoWaitKeepsTheRest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer raw.Close()
	peer := <-accepted
	require.NotNil(t, peer)
	defer peer.Close()
	tc := QuickAckConn(raw).(*tunedConn)

	// More than loopback socket buffers hold, in frames the cork takes.
	want := make([]byte, 0, 16<<20)
	for i := 0; len(want) < 16<<20; i++ {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 200<<10)
		if !tc.room(len(chunk)) {
			done, err := tc.uncorkNoWait()
			require.NoError(t, err)
			if !done {
				break // the socket is full: what we meant to test
			}
		}
		tc.cork()
		_, err := tc.Write(chunk)
		require.NoError(t, err)
		want = append(want, chunk...)
		done, err := tc.uncorkNoWait()
		require.NoError(t, err)
		if !done {
			break
		}
	}
	tc.mu.Lock()
	left := len(tc.buf)
	tc.mu.Unlock()
	require.Positive(t, left, "the socket took everything; the test did not fill it")

	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer)
		got <- b
	}()
	require.NoError(t, tc.uncork()) // blocking: sends the rest
	raw.Close()
	select {
	case b := <-got:
		require.Equal(t, len(want), len(b))
		require.True(t, bytes.Equal(want, b), "bytes arrived out of order or changed")
	case <-time.After(20 * time.Second):
		t.Fatal("the rest never arrived")
	}
}

// bulkAPI echoes whatever it is given.
type bulkAPI struct{}

func (bulkAPI) Echo(s string) string { return s }

// TestBothSidesFloodingDoNotDeadlock has two Go sessions over a real
// WebSocket send each other large frames at once, so both sockets fill:
// the readers, which write their replies without waiting, must never stop
// reading.
func TestBothSidesFloodingDoNotDeadlock(t *testing.T) {
	testenv.CheckGoroutines(t)
	url, served := serveLoopback(t, bulkAPI{}, 8<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, err := Dial(ctx, url, 8<<20)
	require.NoError(t, err)
	client, err := capnweb.NewSession(ws, bulkAPI{}, nil)
	require.NoError(t, err)
	main := client.Main()

	// Frames under the cork limit go out from the reader without waiting;
	// larger ones are left to the writer goroutine.
	const calls = 96
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			size := 200 << 10
			if i%3 == 0 {
				size = maxCork + 1
			}
			s := strings.Repeat(string(rune('a'+i%26)), size)
			v, err := main.CallMethod(ctx, "echo", s)
			if err == nil && v != s {
				err = io.ErrShortWrite
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, client.Close())
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("server session did not end")
	}
}

// serveLoopback serves main over WebSocket on a loopback QuickAckListener
// until the test ends, and returns the URL and the outcome of each
// session, as Serve reports it.
func serveLoopback(t *testing.T, main any, readLimit int64) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 64)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := Accept(w, r, nil, readLimit)
		if err == nil {
			err = capnweb.Serve(r.Context(), ws, main, nil)
		}
		select {
		case served <- err:
		default:
		}
	})}
	go srv.Serve(QuickAckListener(ln))
	t.Cleanup(func() { srv.Close() })
	return "ws://" + ln.Addr().String() + "/", served
}

// TestCloseDuringTraffic closes sessions while their readers are writing
// replies: Close must always return, which needs the writer goroutine to
// hear of the end even when it arrives during the reader's write.
func TestCloseDuringTraffic(t *testing.T) {
	testenv.CheckGoroutines(t)
	url, _ := serveLoopback(t, bulkAPI{}, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for round := range 40 {
		ws, err := Dial(ctx, url, 1<<20)
		require.NoError(t, err)
		client, err := capnweb.NewSession(ws, nil, nil)
		require.NoError(t, err)
		main := client.Main()
		var wg sync.WaitGroup
		answered := make(chan struct{}, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				main.CallMethod(ctx, "echo", strings.Repeat("x", 4096)) // may fail once closed
				answered <- struct{}{}
			}()
		}
		// Each round closes at another point of the traffic: once
		// round%8 of its calls have been answered.
		for range round % 8 {
			<-answered
		}
		closed := make(chan struct{})
		go func() { client.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Close did not return", round)
		}
		wg.Wait()
	}
}
