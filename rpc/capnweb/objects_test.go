package capnweb

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// handOverAPI returns stubs it was given.
type handOverAPI struct{}

// PipeBack returns a stub it obtained and releases its own handle on the
// way out.
func (handOverAPI) PipeBack(cb *Stub) map[string]any {
	p := cb.Pipeline(nil, []any{"x"})
	defer p.Release()
	return map[string]any{"p": p}
}

// PipeBackKept returns a stub it obtained without releasing it: the
// result takes it over.
func (handOverAPI) PipeBackKept(cb *Stub) map[string]any {
	return map[string]any{"p": cb.Pipeline(nil, []any{"y"}), "again": cb.Pipeline(nil, []any{"z"})}
}

// TestReturnedStubIsHandedOver checks that a stub a Go method returns goes
// to the result whether or not the method released it, and that nothing
// of the caller's stays exported afterwards.
func TestReturnedStubIsHandedOver(t *testing.T) {
	CheckLeaks(t)
	client, main := sessionPair(t, handOverAPI{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cb := func(s string) string { return "got " + s }
	v, err := main.CallMethod(ctx, "pipeBack", cb)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"p": "got x"}, v)
	v, err = main.CallMethod(ctx, "pipeBackKept", cb)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"p": "got y", "again": "got z"}, v)
	require.Eventually(t, func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		return len(client.exports) == 1 // its (absent) main only
	}, 5*time.Second, time.Millisecond, "the client's exports to be released")
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
