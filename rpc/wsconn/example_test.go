package wsconn_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
)

// Calculator is the main object the examples serve.
type Calculator struct{}

// Add adds.
func (Calculator) Add(a, b float64) float64 { return a + b }

// A server on a tuned listener and a client dialing it.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, err := wsconn.Accept(w, r, nil, 1<<20)
		if err != nil {
			return
		}
		capnweb.Serve(ctx, t, Calculator{}, nil)
	})}
	// Every connection re-arms TCP_QUICKACK: no 40 ms stall per call.
	go srv.Serve(wsconn.QuickAckListener(ln))
	defer srv.Close()

	t, err := wsconn.Dial(ctx, "ws://"+ln.Addr().String()+"/", 1<<20)
	if err != nil {
		panic(err)
	}
	s, err := capnweb.NewSession(t, nil, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	api := s.Main()
	defer api.Release()
	v, err := api.CallMethod(ctx, "add", 1, 2)
	fmt.Println(v, err)
	// Output: 3 <nil>
}

// A server that authenticates the connection with a first frame of its own
// before Cap'n Web starts on it. The connection came from QuickAckListener,
// so the session keeps the TCP_QUICKACK fix and batched writes.
func ExampleAccept() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, err := wsconn.Accept(w, r, nil, 256)
		if err != nil {
			return
		}
		// Not r.Context(): the request is over once the connection is hijacked.
		actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, hello, err := t.Conn().Read(actx)
		if err != nil || string(hello) != "AUTH secret" {
			t.Conn().Close(websocket.StatusPolicyViolation, "bad token")
			return
		}
		// From here on the connection speaks Cap'n Web only, with a larger limit.
		t.Conn().SetReadLimit(1 << 20)
		capnweb.Serve(context.Background(), t, Calculator{}, nil)
	})}
	go srv.Serve(wsconn.QuickAckListener(ln))
	defer srv.Close()

	ctx := context.Background()
	c, _, _ := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/", nil)
	c.Write(ctx, websocket.MessageText, []byte("AUTH secret"))
	s, _ := capnweb.NewSession(wsconn.New(c, 1<<20), nil, nil)
	defer s.Close()
	api := s.Main()
	defer api.Release()
	v, err := api.CallMethod(ctx, "add", 20, 22)
	fmt.Println(v, err)
	// Output: 42 <nil>
}
