package capnweb

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoAPI echoes whatever it is given.
type echoAPI struct{}

func (echoAPI) Echo(s string) string { return s }

// gate holds calls until n of them are running at once.
type gate struct {
	mu      sync.Mutex
	n       int
	running int
	all     chan struct{}
}

func (g *gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	g.running++
	if g.running == g.n {
		close(g.all)
	}
	g.mu.Unlock()
	select {
	case <-g.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestCallsRunConcurrentlyAfterReuse checks that reusing goroutines for
// calls never serialises them: every round needs all its calls running at
// once, more than the workers a session keeps parked.
func TestCallsRunConcurrentlyAfterReuse(t *testing.T) {
	CheckLeaks(t)
	ca, cb := memPipe()
	const n = 3 * maxIdleWorkers
	g := &gate{n: n, all: make(chan struct{})}
	server, err := NewSession(ca, g, nil)
	require.NoError(t, err)
	client, err := NewSession(cb, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	main := client.Main()
	for round := range 3 {
		g.mu.Lock()
		g.running, g.all = 0, make(chan struct{})
		g.mu.Unlock()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := main.CallMethod(ctx, "wait")
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
	}
	require.LessOrEqual(t, server.idlers.Load(), int32(maxIdleWorkers))
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
}

// gatedTransport is a memConn whose no-wait path, taken by the session's
// reader, holds its first write until the test lets it go.
type gatedTransport struct {
	*memConn
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gatedTransport) BeginBatch()     {}
func (g *gatedTransport) EndBatch() error { return nil }

func (g *gatedTransport) SendNoWait(ctx context.Context, frames [][]byte) (bool, bool, error) {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	for _, f := range frames {
		if err := g.Send(ctx, f); err != nil {
			return true, false, err
		}
	}
	return true, true, nil
}

// TestCloseWhileTheReaderWrites ends a session while its reader is in the
// middle of writing a reply: the writer goroutine, which skips its wake-up
// while another goroutine writes, must still learn of the end and close,
// or Close never returns.
func TestCloseWhileTheReaderWrites(t *testing.T) {
	CheckLeaks(t)
	a, b := memPipe()
	g := &gatedTransport{memConn: a, entered: make(chan struct{}), release: make(chan struct{})}
	s, err := NewSession(g, echoAPI{}, nil)
	require.NoError(t, err)
	ctx := context.Background()
	// A push, then its pull once it has settled: the reader writes the
	// resolution itself.
	require.NoError(t, b.Send(ctx, []byte(`["push",["pipeline",0,["echo"],["x"]]]`)))
	require.Eventually(t, func() bool {
		s.mu.Lock()
		e := s.exports[1]
		s.mu.Unlock()
		return e != nil && e.fut.isSettled()
	}, 5*time.Second, time.Millisecond, "the push never settled")
	require.NoError(t, b.Send(ctx, []byte(`["pull",1]`)))
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader never wrote the resolution itself")
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	// The session has ended (its context is cancelled once the writer was
	// signalled), the writer took the wake-up and, finding the reader
	// writing, skipped it and waits again.
	require.Eventually(t, func() bool {
		return s.ctx.Err() != nil && len(s.wake) == 0 && writerWaiting(s)
	}, 5*time.Second, time.Millisecond, "the writer never skipped its wake-up")
	close(g.release)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after the reader's write")
	}
	b.Close(nil)
}

// writerWaiting reports whether the writer goroutine of s is parked
// waiting for a wake-up.
func writerWaiting(s *Session) bool {
	frame := fmt.Sprintf("capnweb.(*Session).writeLoop(%p", s)
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, frame) {
			header, _, _ := strings.Cut(g, "\n")
			return strings.Contains(header, "[chan receive")
		}
	}
	return false
}
