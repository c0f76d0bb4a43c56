package capnweb

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// latchAPI has a call that waits for another call of the same session.
type latchAPI struct {
	once    sync.Once
	ch      chan struct{}
	started chan string // the names of Wait and Sleep as they start
}

func newLatchAPI() *latchAPI {
	return &latchAPI{ch: make(chan struct{}), started: make(chan string, 16)}
}

func (l *latchAPI) Wait(ctx context.Context) (string, error) {
	l.started <- "wait"
	select {
	case <-l.ch:
		return "released", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (l *latchAPI) Release() { l.once.Do(func() { close(l.ch) }) }

func (l *latchAPI) Sleep(ms float64) {
	l.started <- "sleep"
	time.Sleep(time.Duration(ms) * time.Millisecond)
}

func (l *latchAPI) Add(a, b float64) float64 { return a + b }

// await returns once the method name has started.
func (l *latchAPI) await(t *testing.T, name string) {
	t.Helper()
	select {
	case got := <-l.started:
		require.Equal(t, name, got)
	case <-time.After(5 * time.Second):
		t.Fatalf("%s never started", name)
	}
}

func inlinePair(t *testing.T, api any) (*Session, *Stub) {
	t.Helper()
	ca, cb := memPipe()
	server, err := NewSession(ca, api, nil)
	require.NoError(t, err)
	client, err := NewSession(cb, nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return server, client.Main()
}

// TestQuickCallsStayOnTheReader checks that plain calls to quick methods
// never wake a worker goroutine.
//
// A call that the machine's scheduler holds up past inlineBudget rightly
// moves to a worker, which a loaded machine (and the race detector) does
// now and then; so each of up to ten fresh sessions gets the chance, and
// one must keep every call on its reader. Were quick calls sent to
// workers, none would.
func TestQuickCallsStayOnTheReader(t *testing.T) {
	CheckLeaks(t)
	ctx := context.Background()
	var workers []int32
	for range 10 {
		server, main := inlinePair(t, newLatchAPI())
		for i := range 200 {
			v, err := main.CallMethod(ctx, "add", i, 1)
			require.NoError(t, err)
			require.Equal(t, float64(i+1), v)
		}
		n := server.idlers.Load()
		if n == 0 {
			return
		}
		workers = append(workers, n)
	}
	t.Fatalf("a worker ran a quick call in every session (workers parked: %v)", workers)
}

// TestCallWaitingForALaterFrameDoesNotDeadlock runs, on the reader, a call
// that can only return once a later frame is read: a new reader must take
// over, and the method must leave the reader from then on.
func TestCallWaitingForALaterFrameDoesNotDeadlock(t *testing.T) {
	CheckLeaks(t)
	api := newLatchAPI()
	server, main := inlinePair(t, api)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		v, err := main.CallMethod(ctx, "wait")
		if err == nil && v != "released" {
			err = context.Canceled
		}
		waited <- err
	}()
	api.await(t, "wait") // the wait is running on the reader
	start := time.Now()
	_, err := main.CallMethod(ctx, "release")
	require.NoError(t, err)
	require.NoError(t, <-waited)
	require.Less(t, time.Since(start), time.Second)

	server.mu.Lock()
	m := server.exports[0].fut.val.(*localObj).methods["wait"]
	server.mu.Unlock()
	_, slow := server.slow.Load(m)
	require.True(t, slow, "the method that held the reader is still run on it")
}

// TestSlowCallDoesNotHoldOthers checks that a call sleeping on the reader
// delays other calls by about inlineBudget, not by its whole length.
func TestSlowCallDoesNotHoldOthers(t *testing.T) {
	CheckLeaks(t)
	api := newLatchAPI()
	_, main := inlinePair(t, api)
	ctx := context.Background()
	slept := make(chan error, 1)
	go func() {
		_, err := main.CallMethod(ctx, "sleep", 500)
		slept <- err
	}()
	api.await(t, "sleep") // the sleep holds the reader
	start := time.Now()
	v, err := main.CallMethod(ctx, "add", 1, 2)
	require.NoError(t, err)
	require.Equal(t, 3.0, v)
	require.Less(t, time.Since(start), 250*time.Millisecond, "a quick call waited for a slow one")
	require.NoError(t, <-slept)
}
