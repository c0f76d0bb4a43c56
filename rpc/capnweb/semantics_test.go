package capnweb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// semAPI is the Go side of testdata/semantics.ts; testdata/semserver.ts is
// the same API in JavaScript, the reference the differential test compares
// against.
type semAPI struct {
	_ Names `capnweb:"LastCounterID=lastCounterId"`

	mu       sync.Mutex
	counters []*semCounter
	signal   chan struct{}
	arrived  int
	meet     chan struct{}
	store    *semStore
}

func newSemAPI() *semAPI {
	return &semAPI{signal: make(chan struct{}, 1), meet: make(chan struct{}), store: &semStore{m: map[string]any{}}}
}

type semCounter struct {
	mu       sync.Mutex
	n        float64
	disposed bool
}

func (c *semCounter) Increment(by float64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += by
	return c.n
}

func (c *semCounter) Value() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *semCounter) Dispose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.disposed = true
}

// semStore's Set computes for a while without blocking, as a JavaScript
// method that does not await.
type semStore struct {
	mu sync.Mutex
	m  map[string]any
}

func (s *semStore) Set(k string, v Value, spinMs float64) {
	for end := time.Now().Add(time.Duration(spinMs) * time.Millisecond); time.Now().Before(end); {
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

func (s *semStore) Get(k string) Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[k]; ok {
		return v
	}
	return Undefined{}
}

func (a *semAPI) Add(x, y float64) float64 { return x + y }
func (a *semAPI) Hello(name string) string { return "Hello, " + name + "!" }
func (a *semAPI) Echo(v Value) Value       { return v }
func (a *semAPI) Keys(o *Object) []string  { return o.Keys() }
func (a *semAPI) GetUser() user            { return user{Name: "Ada", Age: 36} }
func (a *semAPI) Store() *semStore         { return a.store }
func (a *semAPI) ThrowValue() error        { return &RemoteError{Value: 42} }
func (a *semAPI) ThrowObject() error {
	return &RemoteError{Value: NewObject("n", 1, "list", []int{1, 2})}
}
func (a *semAPI) Fail(code string) error {
	return Errorf(NameRangeError, map[string]any{"code": code}, "out of range")
}
func (a *semAPI) Ids(n int) []int { return []int{1, 2, 3}[:n] }
func (a *semAPI) ReadAfter(_ any, c *semCounter) *Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	return NewObject("v", c.n, "disposed", c.disposed)
}

func (a *semAPI) Delay(ctx context.Context, ms float64) (float64, error) {
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return ms, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (a *semAPI) SleepAdd(ctx context.Context, x, y, ms float64) (float64, error) {
	if _, err := a.Delay(ctx, ms); err != nil {
		return 0, err
	}
	return x + y, nil
}

func (a *semAPI) MakeCounter(n float64) *semCounter {
	c := &semCounter{n: n}
	a.mu.Lock()
	a.counters = append(a.counters, c)
	a.mu.Unlock()
	return c
}

func (a *semAPI) LastCounterID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.counters)
}

// PipeBack returns a stub it obtained and releases its own handle on the
// way out.
func (a *semAPI) PipeBack(cb *Stub) map[string]any {
	p := cb.Pipeline(nil, []any{"x"})
	defer p.Release()
	return map[string]any{"p": p}
}

func (a *semAPI) Empty() *Object {
	return NewObject("floats", []float64(nil), "ints", map[string]int(nil), "anys", []any(nil),
		"anym", map[string]any(nil), "bytes", []byte(nil))
}

func (a *semAPI) WaitSignal(ctx context.Context) (string, error) {
	select {
	case <-a.signal:
		return "signalled", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (a *semAPI) Signal() string {
	a.signal <- struct{}{}
	return "sent"
}

// Rendezvous returns once n calls have arrived.
func (a *semAPI) Rendezvous(ctx context.Context, i, n int) (int, error) {
	a.mu.Lock()
	meet := a.meet
	if a.arrived++; a.arrived == n {
		close(meet)
		a.arrived, a.meet = 0, make(chan struct{})
	}
	a.mu.Unlock()
	select {
	case <-meet:
		return i, nil
	case <-time.After(5 * time.Second):
		return 0, errors.New("rendezvous timed out")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// semanticLines runs testdata/semantics.ts against url and returns its
// reports in order.
func semanticLines(t *testing.T, url string, port int) []semLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var out []semLine
	for _, l := range runDeno(t, ctx, "semantics.ts", port, url) {
		var r semLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Logf("deno: %s", l)
			continue
		}
		out = append(out, r)
	}
	return out
}

type semLine struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Value  string `json:"value"`
	Detail string `json:"detail"`
}

// TestSemanticsGoServer runs the real capnweb client against the Go server
// through the scenarios whose JavaScript behaviour scripts rely on.
func TestSemanticsGoServer(t *testing.T) {
	url, port := wsServer(t, newSemAPI())
	lines := semanticLines(t, url, port)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		if !l.OK {
			t.Errorf("%s: got %s (%s)", l.Name, l.Value, l.Detail)
		}
	}
}

// deliberateDifferences are the scenarios where the Go server means to
// differ from the JavaScript one (the package doc lists them), with what
// each side gives. The test fails if either side changes, so that a
// difference is never lost or gained unnoticed.
var deliberateDifferences = map[string]struct{ goValue, jsValue, why string }{
	"index into a pending array": {"2", "undefined",
		"the client sends api.list[1] as the string path \"1\", which the JavaScript server follows on objects only; Go follows it as the index the script wrote"},
}

// TestSemanticsDifferential runs the same scenario file against the Go
// server and against the JavaScript reference server, and compares what
// the script saw, scenario by scenario.
func TestSemanticsDifferential(t *testing.T) {
	goURL, goPort := wsServer(t, newSemAPI())
	jsURL, jsPort := denoServerScript(t, "semserver.ts")
	var goLines, jsLines []semLine
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); goLines = semanticLines(t, goURL, goPort) }()
	go func() { defer wg.Done(); jsLines = semanticLines(t, jsURL, jsPort) }()
	wg.Wait()
	require.Equal(t, len(jsLines), len(goLines), "scenarios reported")
	for i, js := range jsLines {
		g := goLines[i]
		require.Equal(t, js.Name, g.Name)
		if !js.OK {
			t.Errorf("%s: the reference itself disagrees with the scenario: %s (%s)", js.Name, js.Value, js.Detail)
		}
		if d, ok := deliberateDifferences[js.Name]; ok {
			if g.Value != d.goValue || js.Value != d.jsValue {
				t.Errorf("%s: the deliberate difference changed (%s): Go %s (want %s), JavaScript %s (want %s)",
					js.Name, d.why, g.Value, d.goValue, js.Value, d.jsValue)
			}
			continue
		}
		if g.Value != js.Value {
			t.Errorf("%s: Go server gave %s, the JavaScript server %s", js.Name, g.Value, js.Value)
		}
	}
}

// PipeBackKept returns a stub it obtained without releasing it: the
// result takes it over.
func (a *semAPI) PipeBackKept(cb *Stub) map[string]any {
	return map[string]any{"p": cb.Pipeline(nil, []any{"y"}), "again": cb.Pipeline(nil, []any{"z"})}
}

// TestReturnedStubIsHandedOver checks that a stub a Go method returns goes
// to the result whether or not the method released it, and that nothing
// of the caller's stays exported afterwards.
func TestReturnedStubIsHandedOver(t *testing.T) {
	CheckLeaks(t)
	client, main := sessionPair(t, newSemAPI(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cb := func(s string) string { return "got " + s }
	v, err := main.CallMethod(ctx, "pipeBack", cb)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"p": "got x"}, v)
	v, err = main.CallMethod(ctx, "pipeBackKept", cb)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"p": "got y", "again": "got z"}, v)
	eventually(t, "the client's exports to be released", func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		return len(client.exports) == 1 // its (absent) main only
	})
}

// TestOrderedObjectsOption checks what Go code receives for objects with
// and without Options.OrderedObjects, and that both send in order.
func TestOrderedObjectsOption(t *testing.T) {
	CheckLeaks(t)
	for _, ordered := range []bool{false, true} {
		_, main := sessionPair(t, &labAPI{events: make(chan string, 16)}, &Options{OrderedObjects: ordered})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, err := main.CallMethod(ctx, "echo", NewObject("b", 1, "a", NewObject("d", 1, "c", 2)))
		require.NoError(t, err)
		if ordered {
			require.Equal(t, []string{"b", "a"}, v.(*Object).Keys())
			in, _ := v.(*Object).Get("a")
			require.Equal(t, []string{"d", "c"}, in.(*Object).Keys())
		} else {
			require.Equal(t, map[string]any{"b": 1.0, "a": map[string]any{"d": 1.0, "c": 2.0}}, v)
		}
		_, err = main.CallMethod(ctx, "failCustom")
		var re *RemoteError
		require.ErrorAs(t, err, &re)
		if ordered {
			require.Equal(t, []string{"n"}, re.Props["details"].(*Object).Keys())
		} else {
			require.Equal(t, map[string]any{"n": 1.0}, re.Props["details"])
		}
		cancel()
	}
}

// sessionPair connects a client session to a server exporting api, both
// with opts, closed when the test ends. It returns the client and its
// stub for the server's main.
func sessionPair(t *testing.T, api any, opts *Options) (*Session, *Stub) {
	t.Helper()
	a, b := memPipe()
	server, err := NewSession(a, api, opts)
	require.NoError(t, err)
	client, err := NewSession(b, nil, opts)
	require.NoError(t, err)
	main := client.Main()
	t.Cleanup(func() {
		main.Release()
		client.Close()
		server.Close()
	})
	return client, main
}

func TestObjectAndDecodeJSON(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"b":1,"a":[{"z":true,"y":null}],"1":"x","b":2}`))
	require.NoError(t, err)
	o := v.(*Object)
	require.Equal(t, []string{"1", "b", "a"}, o.Keys())
	b, _ := o.Get("b")
	require.Equal(t, 2.0, b)
	out, err := json.Marshal(o)
	require.NoError(t, err)
	require.Equal(t, `{"1":"x","b":2,"a":[{"z":true,"y":null}]}`, string(out))
	var back Object
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, o.Keys(), back.Keys())
	require.True(t, o.Delete("b"))
	require.Equal(t, []string{"1", "a"}, o.Keys())
	o.Set("0", "zero")
	o.Set("c", Undefined{})
	out, err = json.Marshal(o)
	require.NoError(t, err)
	require.Equal(t, `{"0":"zero","1":"x","a":[{"z":true,"y":null}]}`, string(out), "undefined members are left out, as JSON.stringify does")
	_, err = DecodeJSON([]byte(`{"a":`))
	require.ErrorIs(t, err, ErrProtocol)
	big := NewObject()
	for i := range 20 {
		big.Set(string(rune('a'+i)), i)
	}
	x, ok := big.Get("s")
	require.True(t, ok)
	require.Equal(t, 18, x)
}

// argTarget is a Handler that reports the Go type of its first argument.
type argTarget struct{}

func (argTarget) CallMethod(_ context.Context, _ string, args []any) (any, error) {
	return fmt.Sprintf("%T", args[0]), nil
}

func (argTarget) GetProperty(context.Context, string) (any, error) { return nil, ErrNotFound }

// TestDynamicCalleesGetMaps checks that a Handler, like an any parameter,
// gets objects as maps unless the session keeps their order.
func TestDynamicCalleesGetMaps(t *testing.T) {
	CheckLeaks(t)
	for ordered, want := range map[bool]string{false: "map[string]interface {}", true: "*capnweb.Object"} {
		_, main := sessionPair(t, argTarget{}, &Options{OrderedObjects: ordered})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, err := main.CallMethod(ctx, "take", NewObject("b", 1, "a", 2))
		cancel()
		require.NoError(t, err)
		require.Equal(t, want, v)
	}
}
