package capnweb

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

type benchAPI struct{}

func (benchAPI) Add(a, b float64) float64 { return a + b }
func (benchAPI) Echo(s string) string     { return s }

// frameTransport is a bare in-memory Transport for benchmarks: the
// benchmark plays the peer with raw frames.
type frameTransport struct {
	in, out chan []byte
	done    chan struct{}
}

func (f *frameTransport) Send(ctx context.Context, msg []byte) error {
	select {
	case f.out <- append([]byte(nil), msg...):
		return nil
	case <-f.done:
		return ErrClosed
	}
}

func (f *frameTransport) Recv(ctx context.Context) ([]byte, error) {
	select {
	case m := <-f.in:
		return m, nil
	case <-f.done:
		return nil, &CloseError{Code: 1000}
	}
}

func (f *frameTransport) Close(error) error { return nil }

// BenchmarkServerCall measures what a server session spends on one call
// from a peer that sends push, pull and release, without any network: the
// session's own CPU time and allocations per call.
func BenchmarkServerCall(b *testing.B) {
	for _, tc := range []struct{ name, call string }{
		{"add", `["pipeline",0,["add"],[1,2]]`},
		{"echo1KiB", `["pipeline",0,["echo"],["` + strings.Repeat("x", 1024) + `"]]`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ft := &frameTransport{in: make(chan []byte, 4), out: make(chan []byte, 4), done: make(chan struct{})}
			s, err := NewSession(ft, benchAPI{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			push := []byte(`["push",` + tc.call + `]`)
			pushPullRelease(b, ft, push)
			close(ft.done)
			s.Close()
		})
	}
}

// parkIdle parks n goroutines, as a large host has, until stop.
func parkIdle(n int) (stop func()) {
	ch := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			<-ch
		}()
	}
	return func() {
		close(ch)
		wg.Wait()
	}
}

// idleCounts are the host goroutines the scheduling benchmarks run
// beside: what a call costs must not depend on them.
var idleCounts = []int{0, 10000}

// BenchmarkServerCallIdle is BenchmarkServerCall's add beside idle
// goroutines.
func BenchmarkServerCallIdle(b *testing.B) {
	for _, n := range idleCounts {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) {
			stop := parkIdle(n)
			defer stop()
			ft := &frameTransport{in: make(chan []byte, 4), out: make(chan []byte, 4), done: make(chan struct{})}
			s, err := NewSession(ft, benchAPI{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			push := []byte(`["push",["pipeline",0,["add"],[1,2]]]`)
			pushPullRelease(b, ft, push)
			close(ft.done)
			s.Close()
		})
	}
}

// handoff is a method and a function whose first call waits, on its ctx,
// for the second, made next on the same object.
type handoff struct{ ch chan struct{} }

func (h *handoff) Wait(ctx context.Context) error {
	select {
	case <-h.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *handoff) Signal() { h.ch <- struct{}{} }

func (h *handoff) fn(ctx context.Context, args []any) (any, error) {
	if args[0] == "wait" {
		return nil, h.Wait(ctx)
	}
	h.Signal()
	return nil, nil
}

// BenchmarkServerCallYield measures the path where the next call on an
// object starts while the first waits: a pair of calls, the first
// waiting for the second, beside idle goroutines. "method" calls methods
// of a Go object, "func" calls a Func itself.
func BenchmarkServerCallYield(b *testing.B) {
	for _, kind := range []string{"method", "func"} {
		for _, n := range idleCounts {
			b.Run(fmt.Sprintf("%s/goroutines=%d", kind, n), func(b *testing.B) {
				stop := parkIdle(n)
				defer stop()
				h := &handoff{ch: make(chan struct{})}
				var main any = h
				wait := []byte(`["push",["pipeline",0,["wait"],[]]]`)
				signal := []byte(`["push",["pipeline",0,["signal"],[]]]`)
				if kind == "func" {
					main = Func(h.fn)
					wait = []byte(`["push",["pipeline",0,[],["wait"]]]`)
					signal = []byte(`["push",["pipeline",0,[],["signal"]]]`)
				}
				ft := &frameTransport{in: make(chan []byte, 8), out: make(chan []byte, 8), done: make(chan struct{})}
				s, err := NewSession(ft, main, nil)
				if err != nil {
					b.Fatal(err)
				}
				id := 0
				b.ReportAllocs()
				for b.Loop() {
					id += 2
					w, g := strconv.Itoa(id-1), strconv.Itoa(id)
					ft.in <- wait
					ft.in <- signal
					ft.in <- []byte(`["pull",` + w + `]`)
					ft.in <- []byte(`["pull",` + g + `]`)
					for range 2 {
						if got := <-ft.out; !bytes.HasPrefix(got, []byte(`["resolve",`)) {
							b.Fatalf("got %s", got)
						}
					}
					ft.in <- []byte(`["release",` + w + `,1]`)
					ft.in <- []byte(`["release",` + g + `,1]`)
				}
				close(ft.done)
				s.Close()
			})
		}
	}
}

// pushPullRelease runs the benchmark loop of one call: push, pull, wait
// for the resolve, release.
func pushPullRelease(b *testing.B, ft *frameTransport, push []byte) {
	id := 0
	b.ReportAllocs()
	for b.Loop() {
		id++
		n := strconv.Itoa(id)
		ft.in <- push
		ft.in <- []byte(`["pull",` + n + `]`)
		if got := <-ft.out; !bytes.HasPrefix(got, []byte(`["resolve",`+n+`,`)) {
			b.Fatalf("got %s", got)
		}
		ft.in <- []byte(`["release",` + n + `,1]`)
	}
}
