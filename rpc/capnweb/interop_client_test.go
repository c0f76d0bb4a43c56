package capnweb_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
)

// denoServer starts testdata/server.ts (the capnweb JavaScript server) and
// returns its ws:// URL. The process is killed when the test ends.
func denoServer(t *testing.T) string {
	t.Helper()
	url, _ := denoServerScript(t, "server.ts")
	return url
}

// denoServerScript starts a server script from testdata that prints
// "LISTEN <port>", and returns its ws:// URL and port.
func denoServerScript(t *testing.T, script string) (string, int) {
	t.Helper()
	deno := testenv.Deno(t)
	path, err := filepath.Abs(filepath.Join("testdata", script))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, deno, "run", "--no-prompt", "--quiet", "--allow-net=127.0.0.1", path)
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("deno server stderr: %s", stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-lines:
		var port int
		_, err := fmt.Sscanf(l, "LISTEN %d", &port)
		require.NoError(t, err, "unexpected first line %q", l)
		return fmt.Sprintf("ws://127.0.0.1:%d/", port), port
	case <-time.After(30 * time.Second):
		t.Fatalf("deno server did not start: %s", stderr.String())
	}
	return "", 0
}

// recorder is a Transport that logs frames in order, for checking what
// travelled on the wire.
type recorder struct {
	capnweb.Transport
	mu  sync.Mutex
	log []string
}

func (r *recorder) Send(ctx context.Context, msg []byte) error {
	r.mu.Lock()
	r.log = append(r.log, "> "+string(msg))
	r.mu.Unlock()
	return r.Transport.Send(ctx, msg)
}

func (r *recorder) Recv(ctx context.Context) ([]byte, error) {
	b, err := r.Transport.Recv(ctx)
	if err == nil {
		r.mu.Lock()
		r.log = append(r.log, "< "+string(b))
		r.mu.Unlock()
	}
	return b, err
}

func (r *recorder) frames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func dialDeno(t *testing.T, url string, main any) (*capnweb.Session, *recorder) {
	t.Helper()
	return dialDenoWith(t, url, main, nil)
}

func dialDenoWith(t *testing.T, url string, main any, opts *capnweb.Options) (*capnweb.Session, *recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := wsconn.Dial(ctx, url, 64<<20)
	require.NoError(t, err)
	rec := &recorder{Transport: ws}
	s, err := capnweb.NewSession(rec, main, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, rec
}

type goListener struct {
	disposed chan struct{}
}

func (l *goListener) Describe(s any) string { return fmt.Sprint("Target got: ", s) }
func (l *goListener) Dispose()              { close(l.disposed) }

// TestInteropGoClientDenoServer runs the Go client against the capnweb
// JavaScript server in Deno, through the same scenarios as the other
// direction.
func TestInteropGoClientDenoServer(t *testing.T) {
	url := denoServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, rec := dialDeno(t, url, nil)
	api := sess.Main()
	defer api.Release()

	t.Run("plain call", func(t *testing.T) {
		v, err := api.CallMethod(ctx, "add", 1, 2)
		require.NoError(t, err)
		require.Equal(t, 3.0, v)
		v, err = api.CallMethod(ctx, "hello", "Bob")
		require.NoError(t, err)
		require.Equal(t, "Hello, Bob!", v)
	})

	t.Run("property get", func(t *testing.T) {
		v, err := api.Get(ctx, "version")
		require.NoError(t, err)
		require.Equal(t, "1.0", v)
	})

	t.Run("nested target", func(t *testing.T) {
		v, err := api.CallMethod(ctx, "makeCounter", 10)
		require.NoError(t, err)
		c := v.(*capnweb.Stub)
		defer c.Release()
		v, err = c.CallMethod(ctx, "increment", 5)
		require.NoError(t, err)
		require.Equal(t, 15.0, v)
		v, err = c.CallMethod(ctx, "value")
		require.NoError(t, err)
		require.Equal(t, 15.0, v)
	})

	t.Run("pipelining three deep", func(t *testing.T) {
		start := len(rec.frames())
		p1 := api.Pipeline([]string{"makeCounter"}, []any{1})
		p2 := p1.Pipeline([]string{"next"}, []any{})
		p3 := p2.Pipeline([]string{"next"}, []any{})
		p4 := p3.Pipeline([]string{"increment"}, []any{2})
		v, err := p4.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, 203.0, v)
		for _, p := range []*capnweb.Stub{p4, p3, p2, p1} {
			p.Release()
		}
		// All four pushes left before any answer came back.
		pushes := 0
		for _, f := range rec.frames()[start:] {
			if strings.HasPrefix(f, `> ["push",`) {
				pushes++
			}
			if strings.HasPrefix(f, `< ["resolve"`) {
				break
			}
		}
		require.Equal(t, 4, pushes, "pushes sent before the first answer: %v", rec.frames()[start:])
		// A promise's property as an argument.
		user := api.Pipeline([]string{"getUser"}, []any{})
		name := user.Pipeline([]string{"name"}, nil)
		v, err = api.CallMethod(ctx, "hello", name)
		require.NoError(t, err)
		require.Equal(t, "Hello, Ada!", v)
		name.Release()
		user.Release()
	})

	t.Run("callback during call", func(t *testing.T) {
		v, err := api.CallMethod(ctx, "callMeBack", func(x float64) float64 { return x * 2 }, 21)
		require.NoError(t, err)
		require.Equal(t, "cb said 42", v)
		l := &goListener{disposed: make(chan struct{})}
		v, err = api.CallMethod(ctx, "useTarget", l)
		require.NoError(t, err)
		require.Equal(t, "Target got: from server", v)
		select {
		case <-l.disposed: // the server released its parameter
		case <-time.After(5 * time.Second):
			t.Fatal("the Go target passed as a parameter was not disposed")
		}
	})

	t.Run("callback after dup", func(t *testing.T) {
		var mu sync.Mutex
		var seen []string
		listener := capnweb.Func(func(ctx context.Context, args []any) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, args[0].(string))
			return "listener got " + args[0].(string), nil
		})
		v, err := api.CallMethod(ctx, "registerListener", listener)
		require.NoError(t, err)
		require.Equal(t, "registered", v)
		v, err = api.CallMethod(ctx, "notify", "hi")
		require.NoError(t, err)
		require.Equal(t, "listener got hi", v)
		v, err = api.CallMethod(ctx, "notify", "again")
		require.NoError(t, err)
		require.Equal(t, "listener got again", v)
		v, err = api.CallMethod(ctx, "dropListener")
		require.NoError(t, err)
		require.Equal(t, "dropped", v)
		mu.Lock()
		require.Equal(t, []string{"hi", "again"}, seen)
		mu.Unlock()
		// The server's dup was released: the export is gone from our table.
		require.Eventually(t, func() bool {
			for _, f := range rec.frames() {
				if strings.HasPrefix(f, `< ["release",-`) {
					return true
				}
			}
			return false
		}, 5*time.Second, 10*time.Millisecond, "the listener export to be released")
	})

	t.Run("error name and code", func(t *testing.T) {
		_, err := api.CallMethod(ctx, "fail", "E_RANGE")
		var re *capnweb.RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "RangeError", re.Name)
		require.Equal(t, "value out of range", re.Message)
		require.Equal(t, "E_RANGE", re.Props["code"])
		_, err = api.CallMethod(ctx, "nonexistent")
		require.ErrorAs(t, err, &re)
		require.Equal(t, "TypeError", re.Name)
	})

	t.Run("dispose reaches JavaScript", func(t *testing.T) {
		v, err := api.CallMethod(ctx, "makeCounter", 7)
		require.NoError(t, err)
		c := v.(*capnweb.Stub)
		id, err := c.CallMethod(ctx, "id")
		require.NoError(t, err)
		c.Release()
		require.Eventually(t, func() bool {
			v, err := api.CallMethod(ctx, "wasDisposed", id)
			return err == nil && v == true
		}, 5*time.Second, 10*time.Millisecond, "the counter's [Symbol.dispose]")
		// Only pipelined on, never awaited.
		p := api.Pipeline([]string{"makeCounter"}, []any{8})
		id2, err := p.CallMethod(ctx, "id")
		require.NoError(t, err)
		p.Release()
		require.Eventually(t, func() bool {
			v, err := api.CallMethod(ctx, "wasDisposed", id2)
			return err == nil && v == true
		}, 5*time.Second, 10*time.Millisecond, "the pipelined counter's [Symbol.dispose]")
	})

	t.Run("map over array", func(t *testing.T) {
		ids := api.Pipeline([]string{"getUserIds"}, []any{})
		defer ids.Release()
		m := ids.Map(func(m *capnweb.Mapper, id capnweb.MapValue) any {
			a := m.Capture(api)
			return []any{id, a.CallMethod("getUserName", id)}
		})
		defer m.Release()
		v, err := m.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, []any{[]any{1.0, "user1"}, []any{2.0, "user2"}, []any{3.0, "user3"}}, v)

		u := api.Pipeline([]string{"getUser"}, []any{})
		defer u.Release()
		m2 := u.Map(func(m *capnweb.Mapper, u capnweb.MapValue) any {
			a := m.Capture(api)
			return map[string]any{"n": u.Get("name"), "h": a.CallMethod("hello", u.Get("name"))}
		})
		defer m2.Release()
		v, err = m2.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"n": "Ada", "h": "Hello, Ada!"}, v)

		// A Go callback captured by the map: JavaScript calls back for each
		// element, then releases the capture.
		l := &goListener{disposed: make(chan struct{})}
		m3 := ids.Map(func(m *capnweb.Mapper, id capnweb.MapValue) any {
			return m.Capture(l).CallMethod("describe", id)
		})
		defer m3.Release()
		v, err = m3.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, []any{"Target got: 1", "Target got: 2", "Target got: 3"}, v)
		select {
		case <-l.disposed:
		case <-time.After(5 * time.Second):
			t.Fatal("the captured Go object was not released after the map")
		}
	})

	t.Run("value round trip", func(t *testing.T) {
		bi, _ := new(big.Int).SetString("12345678901234567890", 10)
		in := map[string]any{
			"u": capnweb.Undefined{}, "nul": nil, "nan": math.NaN(), "inf": math.Inf(1), "ninf": math.Inf(-1),
			"big": bi, "nbig": big.NewInt(-5), "date": time.UnixMilli(1700000000000).UTC(),
			"bytes": []byte{0, 1, 2, 250, 255}, "nested": []any{[]any{1.0, []any{2.0, "s"}}, map[string]any{"a": nil, "b": []any{true, false}}, []any{}},
			"str": "héllo \u2028 \"quoted\" <tag>", "num": 1.5, "large": 1e21, "small": 1e-7,
		}
		v, err := api.CallMethod(ctx, "echo", in)
		require.NoError(t, err)
		out := v.(map[string]any)
		require.True(t, math.IsNaN(out["nan"].(float64)))
		delete(out, "nan")
		want := map[string]any{}
		for k, e := range in {
			if k != "nan" {
				want[k] = e
			}
		}
		require.Equal(t, want, out)
		v, err = api.CallMethod(ctx, "describe", in)
		require.NoError(t, err)
		require.Equal(t, map[string]any{
			"u": "undefined", "nul": "null", "nan": "NaN", "inf": "number", "ninf": "number",
			"big": "bigint", "nbig": "bigint", "date": "Date", "bytes": "Uint8Array", "nested": "Array",
			"str": "string", "num": "number", "large": "number", "small": "number",
		}, v)
		big1 := strings.Repeat("x", 1<<20) + "é"
		v, err = api.CallMethod(ctx, "echo", big1)
		require.NoError(t, err)
		require.Equal(t, big1, v)
	})

	t.Run("then is never callable", func(t *testing.T) {
		_, err := api.CallMethod(ctx, "echo", map[string]any{"then": func() {}})
		require.ErrorIs(t, err, capnweb.ErrUnsupported)
	})

	t.Run("our own object comes back as the Go value", func(t *testing.T) {
		l := &goListener{disposed: make(chan struct{})}
		v, err := api.CallMethod(ctx, "giveBack", l)
		require.NoError(t, err)
		m := v.(map[string]any)
		require.Same(t, l, m["s"])
		require.Same(t, l, m["list"].([]any)[0])
	})

	t.Run("nil slices and maps go out empty", func(t *testing.T) {
		v, err := api.CallMethod(ctx, "describe", map[string]any{
			"floats": []float64(nil), "ints": map[string]int(nil), "anys": []any(nil), "bytes": []byte(nil),
		})
		require.NoError(t, err)
		require.Equal(t, map[string]any{"floats": "Array", "ints": "object", "anys": "Array", "bytes": "Uint8Array"}, v)
	})

	t.Run("map after await runs here", func(t *testing.T) {
		ids := api.Pipeline([]string{"getUserIds"}, []any{})
		defer ids.Release()
		_, err := ids.Await(ctx)
		require.NoError(t, err)
		m := ids.Map(func(m *capnweb.Mapper, id capnweb.MapValue) any {
			return []any{id, m.Capture(api).CallMethod("getUserName", id)}
		})
		defer m.Release()
		v, err := m.Await(ctx)
		require.NoError(t, err)
		require.Equal(t, []any{[]any{1.0, "user1"}, []any{2.0, "user2"}, []any{3.0, "user3"}}, v)
	})

	t.Run("key order both ways", func(t *testing.T) {
		s5, _ := dialDenoWith(t, url, nil, &capnweb.Options{OrderedObjects: true})
		m := s5.Main()
		defer m.Release()
		v, err := m.CallMethod(ctx, "echo", capnweb.NewObject("b", 1, "a", 2, "10", 3, "2", 4, "in", capnweb.NewObject("z", 1, "y", 2)))
		require.NoError(t, err)
		o := v.(*capnweb.Object)
		require.Equal(t, []string{"2", "10", "b", "a", "in"}, o.Keys())
		in, _ := o.Get("in")
		require.Equal(t, []string{"z", "y"}, in.(*capnweb.Object).Keys())
		v, err = m.CallMethod(ctx, "getUser")
		require.NoError(t, err)
		require.Equal(t, []string{"name", "age"}, v.(*capnweb.Object).Keys())
	})

	t.Run("server abort", func(t *testing.T) {
		s2, _ := dialDeno(t, url, nil)
		m := s2.Main()
		defer m.Release()
		_, err := m.CallMethod(ctx, "abortMe", "server going down")
		var ae *capnweb.AbortError
		require.ErrorAs(t, err, &ae)
		require.True(t, ae.Remote)
		var re *capnweb.RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "server going down", re.Message)
		_, err = m.CallMethod(ctx, "add", 1, 1)
		require.ErrorIs(t, err, capnweb.ErrClosed)
		require.ErrorAs(t, s2.Err(), &re)
	})

	t.Run("disconnect cancels an in-flight Go call", func(t *testing.T) {
		s3, _ := dialDeno(t, url, nil)
		m := s3.Main()
		defer m.Release()
		cancelled := make(chan error, 1)
		cb := func(ctx context.Context, _ string) error {
			<-ctx.Done()
			cancelled <- ctx.Err()
			return ctx.Err()
		}
		_, err := m.CallMethod(ctx, "dropWhileCalling", cb)
		require.ErrorIs(t, err, capnweb.ErrClosed)
		var ce *capnweb.CloseError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, 1000, ce.Code)
		select {
		case err := <-cancelled:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("the Go callback's context was not cancelled by the disconnect")
		}
	})

	t.Run("client close fails pending calls and disposes the server main", func(t *testing.T) {
		before, err := api.CallMethod(ctx, "mainDisposals")
		require.NoError(t, err)
		s4, _ := dialDeno(t, url, nil)
		m := s4.Main()
		p := m.Pipeline([]string{"abortMe"}, []any{"never"}) // a call that never returns
		p.Release()
		called := make(chan struct{})
		var once sync.Once
		p = m.Pipeline([]string{"dropWhileCalling"}, []any{func() { once.Do(func() { close(called) }) }})
		done := make(chan error, 1)
		go func() { _, err := p.Await(ctx); done <- err }()
		// The server has the calls: it calls back from dropWhileCalling,
		// or the abortMe before it has already ended the session.
		select {
		case <-called:
		case <-s4.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the calls never reached the server")
		}
		require.NoError(t, s4.Close())
		select {
		case err := <-done:
			require.ErrorIs(t, err, capnweb.ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("a pending call did not fail when the session closed")
		}
		require.Eventually(t, func() bool {
			v, err := api.CallMethod(ctx, "mainDisposals")
			return err == nil && v.(float64) > before.(float64)
		}, 5*time.Second, 10*time.Millisecond, "the server's main object to be disposed")
		require.ErrorIs(t, errors.Unwrap(fmt.Errorf("x: %w", capnweb.ErrClosed)), capnweb.ErrClosed)
	})
}
