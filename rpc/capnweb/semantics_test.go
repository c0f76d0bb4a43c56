package capnweb_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/rpc/capnweb"
)

// semAPI is the Go side of testdata/semantics.ts; testdata/semserver.ts is
// the same API in JavaScript, the reference the differential test compares
// against.
type semAPI struct {
	_ capnweb.Names `capnweb:"LastCounterID=lastCounterId"`

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

func (s *semStore) Set(k string, v capnweb.Value, spinMs float64) {
	for end := time.Now().Add(time.Duration(spinMs) * time.Millisecond); time.Now().Before(end); {
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

func (s *semStore) Get(k string) capnweb.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[k]; ok {
		return v
	}
	return capnweb.Undefined{}
}

func (a *semAPI) Add(x, y float64) float64           { return x + y }
func (a *semAPI) Hello(name string) string           { return "Hello, " + name + "!" }
func (a *semAPI) Echo(v capnweb.Value) capnweb.Value { return v }
func (a *semAPI) Keys(o *capnweb.Object) []string    { return o.Keys() }
func (a *semAPI) GetUser() user                      { return user{Name: "Ada", Age: 36} }
func (a *semAPI) Store() *semStore                   { return a.store }
func (a *semAPI) ThrowValue() error                  { return &capnweb.RemoteError{Value: 42} }
func (a *semAPI) ThrowObject() error {
	return &capnweb.RemoteError{Value: capnweb.NewObject("n", 1, "list", []int{1, 2})}
}
func (a *semAPI) Fail(code string) error {
	return capnweb.Errorf(capnweb.NameRangeError, map[string]any{"code": code}, "out of range")
}
func (a *semAPI) Ids(n int) []int { return []int{1, 2, 3}[:n] }
func (a *semAPI) ReadAfter(_ any, c *semCounter) *capnweb.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	return capnweb.NewObject("v", c.n, "disposed", c.disposed)
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
func (a *semAPI) PipeBack(cb *capnweb.Stub) map[string]any {
	p := cb.Pipeline(nil, []any{"x"})
	defer p.Release()
	return map[string]any{"p": p}
}

func (a *semAPI) Empty() *capnweb.Object {
	return capnweb.NewObject("floats", []float64(nil), "ints", map[string]int(nil), "anys", []any(nil),
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
