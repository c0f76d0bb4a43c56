package capnweb

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type smokeCounter struct {
	n        float64
	disposed chan struct{}
}

func (c *smokeCounter) Increment(by float64) float64 { c.n += by; return c.n }
func (c *smokeCounter) Next() *smokeCounter {
	return &smokeCounter{n: c.n + 100, disposed: make(chan struct{}, 1)}
}
func (c *smokeCounter) Dispose() { c.disposed <- struct{}{} }

type smokeAPI struct {
	Version string `capnweb:"version"`
	made    chan *smokeCounter
}

func (a *smokeAPI) Add(x, y float64) float64 { return x + y }
func (a *smokeAPI) MakeCounter(start float64) *smokeCounter {
	c := &smokeCounter{n: start, disposed: make(chan struct{}, 1)}
	if a.made != nil {
		a.made <- c
	}
	return c
}
func (a *smokeAPI) Fail(ctx context.Context) error {
	return &Error{Name: NameRangeError, Message: "boom", Props: map[string]any{"code": "E_BOOM"}}
}
func (a *smokeAPI) CallMeBack(ctx context.Context, cb *Stub, x float64) (string, error) {
	v, err := cb.Call(ctx, x)
	if err != nil {
		return "", err
	}
	return "cb said " + string(appendNumberForText(nil, v.(float64))), nil
}
func (a *smokeAPI) Echo(v any) any { return v }

func TestSmokeGoToGo(t *testing.T) {
	CheckLeaks(t)
	ca, cb := memPipe()
	api := &smokeAPI{Version: "1.0", made: make(chan *smokeCounter, 10)}
	server, err := NewSession(ca, api, nil)
	require.NoError(t, err)
	client, err := NewSession(cb, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	main := client.Main()

	v, err := main.CallMethod(ctx, "add", 1, 2)
	require.NoError(t, err)
	require.Equal(t, 3.0, v)

	v, err = main.Get(ctx, "version")
	require.NoError(t, err)
	require.Equal(t, "1.0", v)

	p := main.Pipeline([]string{"makeCounter"}, []any{1})
	q := p.Pipeline([]string{"next"}, []any{})
	r := q.Pipeline([]string{"increment"}, []any{5})
	v, err = r.Await(ctx)
	require.NoError(t, err)
	require.Equal(t, 106.0, v)
	r.Release()
	q.Release()
	p.Release()
	c1 := <-api.made
	select {
	case <-c1.disposed:
	case <-time.After(5 * time.Second):
		t.Fatal("counter not disposed")
	}

	_, err = main.CallMethod(ctx, "fail")
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "RangeError", re.Name)
	require.Equal(t, "E_BOOM", re.Props["code"])

	v, err = main.CallMethod(ctx, "callMeBack", func(ctx context.Context, x float64) float64 { return x * 2 }, 21)
	require.NoError(t, err)
	require.Equal(t, "cb said 42", v)

	in := map[string]any{"a": []any{1.0, "x", nil, Undefined{}}, "b": map[string]any{"c": true}}
	v, err = main.CallMethod(ctx, "echo", in)
	require.NoError(t, err)
	require.Equal(t, in, v)

	_, err = main.CallMethod(ctx, "nope")
	require.ErrorAs(t, err, &re)
	require.Equal(t, "TypeError", re.Name)

	main.Release()
	require.NoError(t, client.Close())
	require.NoError(t, server.Close())
	require.True(t, errors.Is(server.Err(), ErrClosed))
}
