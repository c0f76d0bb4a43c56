package capnweb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// labCounter mirrors the Counter of the JavaScript lab server whose traces
// the golden files hold.
type labCounter struct {
	mu     sync.Mutex
	N      float64 `capnweb:"value"`
	events chan<- string
}

func (c *labCounter) Increment(by ...float64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(by) == 0 {
		by = []float64{1}
	}
	c.N += by[0]
	return c.N
}

func (c *labCounter) Dispose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events <- fmt.Sprintf("disposed counter %v", c.N)
}

// labAPI mirrors the JavaScript lab server's API.
type labAPI struct {
	Version  string `capnweb:"version"`
	events   chan string
	mu       sync.Mutex
	listener *Stub
}

func (a *labAPI) Dispose()                   { a.events <- "disposed main" }
func (a *labAPI) Add(x, y float64) float64   { return x + y }
func (a *labAPI) Hello(name string) string   { return "Hello, " + name + "!" }
func (a *labAPI) GetUser() map[string]string { return map[string]string{"name": "Ada"} }
func (a *labAPI) GetUserIds() []int          { return []int{1, 2, 3} }
func (a *labAPI) GetUserName(id int) string  { return "user" + strconv.Itoa(id) }
func (a *labAPI) MakeCounter(n float64) *labCounter {
	return &labCounter{N: n, events: a.events}
}
func (a *labAPI) Twice() []*labCounter {
	c := a.MakeCounter(7)
	return []*labCounter{c, c}
}
func (a *labAPI) UseCounter(c *labCounter) float64 { return c.Increment(100) }
func (a *labAPI) SlowAdd(ctx context.Context, x, y, ms float64) (float64, error) {
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return x + y, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
func (a *labAPI) Fail() error { return &Error{Name: NameRangeError, Message: "boom"} }
func (a *labAPI) FailCustom() error {
	return &Error{Message: "bad thing", Props: map[string]any{"code": "E_BAD", "details": map[string]int{"n": 1}}}
}
func (a *labAPI) FailString() error  { return &RemoteError{Value: "just a string"} }
func (a *labAPI) Echo(v Value) Value { return v }
func (a *labAPI) CallMeBack(ctx context.Context, cb *Stub, x float64) (string, error) {
	v, err := cb.Call(ctx, x)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("cb said %v", v), nil
}
func (a *labAPI) CallBack(ctx context.Context, cb *Stub) (any, error) { return cb.Call(ctx, "x") }
func (a *labAPI) UseTarget(ctx context.Context, t *Stub) (any, error) {
	return t.CallMethod(ctx, "describe", "from server")
}
func (a *labAPI) RegisterListener(cb *Stub) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listener = cb.Dup()
	return "registered"
}
func (a *labAPI) Notify(ctx context.Context, msg string) (any, error) {
	a.mu.Lock()
	l := a.listener
	a.mu.Unlock()
	return l.Call(ctx, msg)
}
func (a *labAPI) DropListener() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listener.Release()
	a.listener = nil
	return "dropped"
}
func (a *labAPI) CallClientMain(ctx context.Context) (any, error) {
	m := SessionFromContext(ctx).Main()
	defer m.Release()
	return m.CallMethod(ctx, "ping", "from server")
}
func (a *labAPI) ThenTrap() map[string]any {
	return map[string]any{"then": func() {}}
}

type goldenBlock struct {
	name  string
	lines []string
}

func readGolden(t *testing.T, name string) []goldenBlock {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "golden", name))
	require.NoError(t, err)
	defer f.Close()
	var blocks []goldenBlock
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "=== "):
			blocks = append(blocks, goldenBlock{name: strings.TrimPrefix(l, "=== ")})
		default:
			require.NotEmpty(t, blocks, "line outside a block: %s", l)
			blocks[len(blocks)-1].lines = append(blocks[len(blocks)-1].lines, l)
		}
	}
	require.NoError(t, sc.Err())
	return blocks
}

// replay drives a session through a transcript. in is the prefix of lines
// fed to the session, out the prefix of lines it must produce.
func replay(t *testing.T, peer *memConn, events <-chan string, lines []string, in, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, in+" "):
			frame := strings.ReplaceAll(strings.TrimPrefix(l, in+" "), "<NL>", "\n")
			require.NoError(t, peer.Send(ctx, []byte(frame)))
		case strings.HasPrefix(l, out+" "):
			want := strings.TrimPrefix(l, out+" ")
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			got, err := peer.Recv(rctx)
			rcancel()
			require.NoError(t, err, "waiting for %s", want)
			require.Equal(t, want, string(got))
		case strings.HasPrefix(l, "disposed "):
			select {
			case ev := <-events:
				require.Equal(t, l, ev)
			case <-time.After(5 * time.Second):
				t.Fatalf("waiting for %q", l)
			}
		case strings.HasPrefix(l, "wait "):
			ms, err := strconv.Atoi(strings.TrimPrefix(l, "wait "))
			require.NoError(t, err)
			time.Sleep(time.Duration(ms) * time.Millisecond)
		default:
			t.Fatalf("bad transcript line %q", l)
		}
	}
	// Nothing more may come out.
	select {
	case extra := <-peer.in:
		t.Fatalf("unexpected frame after the transcript: %s", extra)
	case <-time.After(30 * time.Millisecond):
	}
}

// TestGoldenServer replays captured capnweb traces against a Go server and
// checks every frame it sends, byte for byte.
func TestGoldenServer(t *testing.T) {
	CheckLeaks(t)
	for _, b := range readGolden(t, "server.txt") {
		t.Run(b.name, func(t *testing.T) {
			events := make(chan string, 16)
			api := &labAPI{Version: "1.0", events: events}
			mine, peer := memPipe()
			s, err := NewSession(mine, api, &Options{MaxBigIntDigits: 100})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			replay(t, peer, events, b.lines, "C->S", "S->C")
			peer.Close(nil)
			require.NoError(t, s.Close())
			if !strings.Contains(b.name, "R15") {
				select {
				case ev := <-events:
					require.Equal(t, "disposed main", ev, "main is disposed when the session ends")
				case <-time.After(time.Second):
					t.Fatal("main was not disposed at the end")
				}
			}
		})
	}
}

// goldenClientActions are what the Go client does in each client-side
// transcript; they run while the transcript plays the server.
var goldenClientActions = map[string]func(ctx context.Context, t *testing.T, s *Session, main *Stub){
	"R2 call, pull, release": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		v, err := main.CallMethod(ctx, "add", 5, 6)
		require.NoError(t, err)
		require.Equal(t, 11.0, v)
	},
	"R3 pipelined calls on a pushed result, pull only the last": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		c := main.Pipeline([]string{"makeCounter"}, []any{1})
		i1 := c.Pipeline([]string{"increment"}, []any{2})
		i2 := c.Pipeline([]string{"increment"}, []any{3})
		v, err := i2.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, 6.0, v)
		i2.Release()
		i1.Release()
		c.Release()
	},
	"S1 reject with an unknown error name and a stack": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		_, err := main.CallMethod(ctx, "doIt")
		var re *RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "MyCustomError", re.Name)
		require.Equal(t, "custom failure", re.Message)
		require.Contains(t, re.Stack, "handler.go:42")
	},
	"S3 server aborts while a call is outstanding": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		_, err := main.CallMethod(ctx, "doIt")
		var ae *AbortError
		require.ErrorAs(t, err, &ae)
		require.True(t, ae.Remote)
		require.Contains(t, err.Error(), "server going down")
		_, err = main.CallMethod(ctx, "doIt")
		require.ErrorIs(t, err, ErrClosed)
	},
	"S6 server calls the client's main on open": nil,
	"S7 same without a client main":             nil,
	"S9 server-defined stub and value types": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		v, err := main.CallMethod(ctx, "getStuff")
		require.NoError(t, err)
		m := v.(map[string]any)
		st := m["s"].(*Stub)
		require.Equal(t, time.UnixMilli(0).UTC(), m["d"])
		require.Equal(t, "9007199254740993", fmt.Sprint(m["b"]))
		require.Equal(t, []byte{1, 2, 3}, m["by"])
		require.Equal(t, []any{1.0, 2.0}, m["arr"])
		require.Equal(t, Undefined{}, m["u"])
		v, err = st.CallMethod(ctx, "hello", "x")
		require.NoError(t, err)
		require.Equal(t, "called stub ok", v)
		st.Release()
	},
	"S10 unsolicited resolve of a push that was only pipelined": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		p := main.Pipeline([]string{"makeThing"}, []any{})
		waitSettled(t, p)
		v, err := p.CallMethod(ctx, "use")
		require.NoError(t, err)
		require.Equal(t, "pipelined ok", v)
		p.Release()
	},
	"S11 nested path call and index path": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		v, err := main.Pipeline([]string{"a", "b", "c"}, []any{1}).Await(ctx)
		require.NoError(t, err)
		require.Equal(t, Undefined{}, v)
	},
	"S12 late resolve after the client released the promise": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		main.Pipeline([]string{"slow"}, []any{}).Release()
	},
	"S13 (Go) a then stub is not called": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		v, err := main.CallMethod(ctx, "get")
		require.NoError(t, err)
		st := v.(map[string]any)["then"].(*Stub)
		st.Release()
	},
	"S14 (Go) the server calls a callback it released": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		_, err := main.CallMethod(ctx, "register", func(string) string { return "" })
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, s.Err(), ErrProtocol)
	},
	"S16 (Go) a map from the Go client": func(ctx context.Context, t *testing.T, s *Session, main *Stub) {
		ids := main.Pipeline([]string{"getUserIds"}, []any{})
		m := ids.Map(func(m *Mapper, id MapValue) any {
			api := m.Capture(main)
			return []any{id, api.CallMethod("getUserName", id)}
		})
		v, err := m.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, []any{[]any{1.0, "user1"}}, v)
		m.Release()
		ids.Release()
	},
}

// waitSettled waits until a promise stub's result has arrived.
func waitSettled(t *testing.T, p *Stub) {
	t.Helper()
	select {
	case <-p.imp.fut.done:
	case <-time.After(5 * time.Second):
		t.Fatal("promise did not settle")
	}
}

type pinger struct{}

func (pinger) Ping(s string) string { return "pong:" + s }

// TestGoldenClient replays captured traces against a Go client: the
// transcript plays the server, and the client's frames must match.
func TestGoldenClient(t *testing.T) {
	CheckLeaks(t)
	for _, b := range readGolden(t, "client.txt") {
		t.Run(b.name, func(t *testing.T) {
			action, ok := goldenClientActions[b.name]
			require.True(t, ok, "no action for %q", b.name)
			var main any
			if strings.HasPrefix(b.name, "S6") {
				main = pinger{}
			}
			mine, peer := memPipe()
			s, err := NewSession(mine, main, nil)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			stub := s.Main()
			done := make(chan struct{})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go func() {
				defer close(done)
				if action != nil {
					action(ctx, t, s, stub)
				}
			}()
			replay(t, peer, nil, b.lines, "S->C", "C->S")
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the client action did not finish")
			}
			stub.Release()
			peer.Close(nil)
			require.NoError(t, s.Close())
		})
	}
}

var _ = errors.New
