package capnweb

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// handoffAPI has pairs of methods where the first waits for the second,
// called next on the same object.
type handoffAPI struct {
	ch      chan string
	started chan struct{}
	mu      sync.Mutex
	order   []string
}

func newHandoffAPI() *handoffAPI {
	return &handoffAPI{ch: make(chan string), started: make(chan struct{}, 1)}
}

func (a *handoffAPI) note(s string) {
	a.mu.Lock()
	a.order = append(a.order, s)
	a.mu.Unlock()
}

// Take blocks on a channel, without its ctx, until Put fills it.
func (a *handoffAPI) Take() string {
	a.started <- struct{}{}
	v := <-a.ch
	a.note("take")
	return v
}

// TakeAfterYield is Take after a Yield.
func (a *handoffAPI) TakeAfterYield(ctx context.Context) string {
	Yield(ctx)
	return a.Take()
}

// TakeOrCancel waits the Go way: in a select on its ctx.
func (a *handoffAPI) TakeOrCancel(ctx context.Context) (string, error) {
	select {
	case v := <-a.ch:
		return v, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Ask calls the peer through cb, with a ctx whose Done is not the
// method's own, and returns what it said.
func (a *handoffAPI) Ask(ctx context.Context, cb *Stub) (any, error) {
	return cb.Call(context.WithoutCancel(ctx))
}

// Put fills the channel a waiting call reads.
func (a *handoffAPI) Put(v string) string {
	a.note("put")
	a.ch <- v
	return "put " + v
}

// Relay returns the stub the peer's cb returned, released on the way out.
func (a *handoffAPI) Relay(ctx context.Context, cb *Stub) (*Stub, error) {
	v, err := cb.Call(ctx)
	if err != nil {
		return nil, err
	}
	st := v.(*Stub)
	defer st.Release()
	return st, nil
}

// turnPair connects a client to a server exporting api whose calls hold
// their turns for slice, and returns the server and the client's stub
// for the server's main.
func turnPair(t *testing.T, api any, slice time.Duration) (*Session, *Session, *Stub) {
	t.Helper()
	a, b := memPipe()
	server, err := NewSession(a, api, nil)
	require.NoError(t, err)
	server.slice = slice // before any call: the frames below order it
	client, err := NewSession(b, nil, nil)
	require.NoError(t, err)
	main := client.Main()
	t.Cleanup(func() {
		main.Release()
		client.Close()
		server.Close()
	})
	return server, client, main
}

// awaitBoth pipelines first and then second on main, without waiting in
// between, and returns their results once both have come.
func awaitBoth(t *testing.T, ctx context.Context, main *Stub, first, second string, firstArgs ...any) (any, any) {
	t.Helper()
	p1 := main.Pipeline([]string{first}, nonNil(firstArgs))
	defer p1.Release()
	p2 := main.Pipeline([]string{second}, []any{"v"})
	defer p2.Release()
	v2, err := p2.Await(ctx)
	require.NoError(t, err, "%s, called behind %s", second, first)
	v1, err := p1.Await(ctx)
	require.NoError(t, err, first)
	return v1, v2
}

// TestBlockedMethodLetsNextCallIn checks that a method blocked where
// capnweb cannot see, on a channel the next call on its object fills,
// does not deadlock its object: the next call starts once the slice is
// over.
func TestBlockedMethodLetsNextCallIn(t *testing.T) {
	CheckLeaks(t)
	api := newHandoffAPI()
	_, _, main := turnPair(t, api, turnSlice)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	v1, v2 := awaitBoth(t, ctx, main, "take", "put")
	took := time.Since(start)
	require.Equal(t, "v", v1)
	require.Equal(t, "put v", v2)
	require.GreaterOrEqual(t, took, turnSlice, "put started before take's slice was over")
	require.Less(t, took, 20*turnSlice, "put waited far longer than the slice")
}

// TestWaitingGivesTheTurnUp checks, with a slice too long to matter,
// that a method gives its object's turn up at once when it yields, when
// it waits on its ctx, and when it waits for the peer through a Stub.
func TestWaitingGivesTheTurnUp(t *testing.T) {
	CheckLeaks(t)
	for _, tc := range []struct {
		name, method string
		args         func(c *Session, api *handoffAPI) []any
	}{
		{"Yield", "takeAfterYield", nil},
		{"select on ctx.Done", "takeOrCancel", nil},
		{"a call to the peer", "ask", func(c *Session, api *handoffAPI) []any {
			// The peer answers once the server's next call has run.
			return []any{Func(func(ctx context.Context, _ []any) (any, error) {
				select {
				case v := <-api.ch:
					return v, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newHandoffAPI()
			_, client, main := turnPair(t, api, time.Hour)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var args []any
			if tc.args != nil {
				args = tc.args(client, api)
			}
			v1, v2 := awaitBoth(t, ctx, main, tc.method, "put", args...)
			require.Equal(t, "v", v1)
			require.Equal(t, "put v", v2)
		})
	}
}

// TestTurnHeldUntilReturn checks that a method that neither returns nor
// waits where capnweb sees it, within its slice, holds the next call on
// its object back, and that the calls then start in arrival order.
func TestTurnHeldUntilReturn(t *testing.T) {
	CheckLeaks(t)
	api := newHandoffAPI()
	api.ch = make(chan string, 1) // put would not wait for take
	server, _, main := turnPair(t, api, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p1 := main.Pipeline([]string{"take"}, []any{})
	defer p1.Release()
	<-api.started
	p2 := main.Pipeline([]string{"put"}, []any{"v"})
	defer p2.Release()
	// Both calls are in flight once put has arrived and waits for its turn.
	require.Eventually(t, func() bool {
		server.qmu.Lock()
		defer server.qmu.Unlock()
		return server.inflight == 2
	}, 5*time.Second, time.Millisecond)
	api.mu.Lock()
	require.Empty(t, api.order, "put ran while take held the turn")
	api.mu.Unlock()
	api.ch <- "direct" // take returns
	v, err := p1.Await(ctx)
	require.NoError(t, err)
	require.Equal(t, "direct", v)
	_, err = p2.Await(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"take", "put"}, api.order)
}

// TestReturnedAwaitedStubIsHandedOver checks that a method may release,
// with defer, a stub it got from a call made with its ctx and still
// return it: the release waits for the result.
func TestReturnedAwaitedStubIsHandedOver(t *testing.T) {
	CheckLeaks(t)
	_, _, main := turnPair(t, newHandoffAPI(), turnSlice)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	inner := Func(func(context.Context, []any) (any, error) { return "inner", nil })
	cb := Func(func(context.Context, []any) (any, error) { return inner, nil })
	v, err := main.CallMethod(ctx, "relay", cb)
	require.NoError(t, err)
	f, ok := v.(Func)
	require.True(t, ok, "relay gave %T %v", v, v)
	r, err := f(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "inner", r)
}

// TestNoGoroutineIntrospection checks that the package's code never reads
// the runtime's goroutine dumps or profiles: scheduling must not cost in
// proportion to the host's goroutines, nor depend on the runtime's text.
// (debug.Stack, the panicking goroutine's own stack for Options.OnPanic,
// is neither.)
func TestNoGoroutineIntrospection(t *testing.T) {
	forbidden := map[string]map[string]bool{
		"runtime":       {"Stack": true, "GoroutineProfile": true},
		"runtime/pprof": nil, // any use
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		checked++
		names := map[string]string{} // local name → import path
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if _, ok := forbidden[path]; !ok {
				continue
			}
			local := filepath.Base(path)
			if im.Name != nil {
				local = im.Name.Name
			}
			if forbidden[path] == nil {
				t.Errorf("%s imports %s", fset.Position(im.Pos()), path)
			}
			names[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := names[id.Name]; ok && forbidden[path][sel.Sel.Name] {
					t.Errorf("%s: %s.%s", fset.Position(sel.Pos()), path, sel.Sel.Name)
				}
			}
			return true
		})
	}
	require.Greater(t, checked, 10, "the package's files were not found")
}
