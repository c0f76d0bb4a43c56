package capnweb_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
)

// Calculator is exported to the peer: its methods are callable as add,
// makeCounter and divide.
type Calculator struct{}

func (Calculator) Add(a, b float64) float64 { return a + b }

func (Calculator) MakeCounter(start float64) *Counter { return &Counter{n: start} }

func (Calculator) Divide(a, b float64) (float64, error) {
	if b == 0 {
		return 0, &capnweb.Error{Name: capnweb.NameRangeError, Message: "division by zero",
			Props: map[string]any{"code": "E_DIV_ZERO"}}
	}
	return a / b, nil
}

// Counter is returned by reference: the peer gets a stub.
type Counter struct{ n float64 }

func (c *Counter) Increment(ctx context.Context, by float64) float64 { c.n += by; return c.n }

// Dispose runs when the peer has released every reference.
func (c *Counter) Dispose() {}

// serve runs main on a loopback WebSocket server (package rpc/wsconn), the
// way a host does, and returns the URL and a stop function.
func serve(main any) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := wsconn.Accept(w, r, nil, 1<<20)
		if err != nil {
			return
		}
		capnweb.Serve(ctx, ws, main, nil)
	})}
	// QuickAckListener: no 40 ms stall per call from Deno clients on Linux.
	go srv.Serve(wsconn.QuickAckListener(ln))
	return "ws://" + ln.Addr().String() + "/", func() { cancel(); srv.Close() }
}

// connect serves main, dials it and returns the stub of main and a
// function that closes everything.
func connect(main any) (*capnweb.Stub, func()) {
	url, stop := serve(main)
	ws, err := wsconn.Dial(context.Background(), url, 1<<20)
	if err != nil {
		panic(err)
	}
	s, err := capnweb.NewSession(ws, nil, nil)
	if err != nil {
		panic(err)
	}
	api := s.Main()
	return api, func() { api.Release(); s.Close(); stop() }
}

func Example() {
	api, done := connect(Calculator{})
	defer done()

	sum, err := api.CallMethod(context.Background(), "add", 1, 2)
	fmt.Println(sum, err)
	// Output: 3 <nil>
}

func ExampleStub_Pipeline() {
	api, done := connect(Calculator{})
	defer done()

	// Both calls leave before the counter exists: one round trip.
	counter := api.Pipeline([]string{"makeCounter"}, []any{10})
	defer counter.Release()
	next := counter.Pipeline([]string{"increment"}, []any{5})
	defer next.Release()
	v, err := next.Await(context.Background())
	fmt.Println(v, err)
	// Output: 15 <nil>
}

func ExampleStub_Map() {
	api, done := connect(Calculator{})
	defer done()

	nums := api.Pipeline([]string{"add"}, []any{1, 1}) // a number: the map runs once
	defer nums.Release()
	doubled := nums.Map(func(m *capnweb.Mapper, n capnweb.MapValue) any {
		calc := m.Capture(api)
		return []any{n, calc.CallMethod("add", n, n)}
	})
	defer doubled.Release()
	v, err := doubled.Await(context.Background())
	fmt.Println(v, err)
	// Output: [2 4] <nil>
}

func ExampleError() {
	api, done := connect(Calculator{})
	defer done()

	_, err := api.CallMethod(context.Background(), "divide", 1, 0)
	var re *capnweb.RemoteError
	if errors.As(err, &re) {
		// A script sees a RangeError whose code is "E_DIV_ZERO".
		fmt.Println(re.Name, re.Message, re.Props["code"])
	}
	// Output: RangeError division by zero E_DIV_ZERO
}
