package capnweb_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
)

// addAPI is the server of the WebSocket benchmarks.
type addAPI struct{}

// Add adds.
func (addAPI) Add(a, b float64) float64 { return a + b }

// BenchmarkCallWebSocket measures sequential add calls from a Go client
// to a Go server over a loopback WebSocket.
func BenchmarkCallWebSocket(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		capnweb.Serve(r.Context(), wsconn.New(c, 1<<20), addAPI{}, nil)
	}))
	defer srv.Close()
	ctx := context.Background()
	ws, err := wsconn.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	s, err := capnweb.NewSession(ws, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	main := s.Main()
	defer main.Release()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := main.CallMethod(ctx, "add", 1, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEchoWebSocket is the floor for BenchmarkCallWebSocket: one
// frame each way on the same kind of connection.
func BenchmarkEchoWebSocket(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		for {
			typ, m, err := c.Read(context.Background())
			if err != nil {
				return
			}
			c.Write(context.Background(), typ, m)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	msg := []byte(`["push",["pipeline",0,["add"],[1,2]]]`)
	b.ReportAllocs()
	for b.Loop() {
		c.Write(ctx, websocket.MessageText, msg)
		if _, _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
