package capnweb

import (
	"bytes"
	"context"
	"strconv"
	"strings"
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
			close(ft.done)
			s.Close()
		})
	}
}
