package capnweb

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// abortedWith feeds frames to a server session and returns the abort frame
// it answers with and the session's error.
func abortedWith(t *testing.T, opts *Options, frames ...string) (string, error) {
	t.Helper()
	mine, peer := memPipe()
	s, err := NewSession(mine, &labAPI{events: make(chan string, 16)}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, f := range frames {
		require.NoError(t, peer.Send(ctx, []byte(f)))
	}
	for {
		got, err := peer.Recv(ctx)
		require.NoError(t, err)
		if strings.HasPrefix(string(got), `["abort",`) {
			<-s.Done()
			return string(got), s.Err()
		}
	}
}

func TestLimitsAbortWithClearErrors(t *testing.T) {
	CheckLeaks(t)
	deep := strings.Repeat("[[", 300) + strings.Repeat("]]", 300)
	cases := []struct {
		name   string
		opts   *Options
		frames []string
		want   string
		is     error
	}{
		{"message size", &Options{MaxMessageSize: 100}, []string{`["push","` + strings.Repeat("x", 200) + `"]`},
			`["abort",["error","Error","message of 211 bytes exceeds the limit of 100"]]`, ErrLimit},
		{"nesting depth", nil, []string{`["push",` + deep + `]`},
			`["abort",["error","Error","message nesting depth exceeds 255"]]`, ErrLimit},
		{"smaller nesting depth", &Options{MaxDepth: 10}, []string{`["push",` + strings.Repeat("[[", 11) + strings.Repeat("]]", 11) + `]`},
			`["abort",["error","Error","message nesting depth exceeds 9"]]`, ErrLimit},
		{"bigint digits", nil, []string{`["push",["bigint","` + strings.Repeat("9", 16385) + `"]]`},
			`["abort",["error","Error","bigint of 16385 digits exceeds the limit of 16384"]]`, ErrLimit},
		{"bad bigint", nil, []string{`["push",["bigint","12x"]]`},
			`["abort",["error","Error","bad bigint \"12x\""]]`, ErrProtocol},
		{"bad base64", nil, []string{`["push",["bytes","!!"]]`},
			`["abort",["error","Error","bad base64 in bytes: illegal base64 data at input byte 0"]]`, ErrProtocol},
		{"unknown byte container", nil, []string{`["push",["bytes","AA","Map"]]`},
			`["abort",["error","Error","unknown byte container \"Map\""]]`, ErrProtocol},
		{"not an array", nil, []string{`{"push":1}`},
			`["abort",["error","Error","bad RPC message: {\"push\":1}"]]`, ErrProtocol},
		{"empty array", nil, []string{`[]`},
			`["abort",["error","Error","bad RPC message: []"]]`, ErrProtocol},
		{"wrong arity", nil, []string{`["pull"]`},
			`["abort",["error","Error","bad RPC message: [\"pull\"]"]]`, ErrProtocol},
		{"fractional id", nil, []string{`["pull",1.5]`},
			`["abort",["error","Error","bad RPC message: [\"pull\",1.5]"]]`, ErrProtocol},
		{"positive export id", nil, []string{`["push",["export",3]]`},
			`["abort",["error","Error","export ID 3 must be negative"]]`, ErrProtocol},
		{"reused promise id", nil, []string{`["push",[[["promise",-1],["promise",-1]]]]`},
			`["abort",["error","Error","promise ID -1 is already in use"]]`, ErrProtocol},
		{"bad map capture", nil, []string{`["push",["remap",0,[],[["weird",1]],[]]]`},
			`["abort",["error","Error","unknown map capture: [\"weird\",1]"]]`, ErrProtocol},
		{"stream value", nil, []string{`["push",["readable",1]]`},
			`["abort",["error","Error","\"readable\" values (streams) are not supported by this peer"]]`, ErrUnsupported},
		{"stream message", nil, []string{`["stream",["pipeline",0,["add"],[1,2]]]`},
			`["abort",["error","Error","\"stream\" messages (streams) are not supported by this peer"]]`, ErrUnsupported},
		{"release of unknown id", nil, []string{`["release",-7,1]`},
			`["abort",["error","Error","no such entry on exports table: -7"]]`, ErrProtocol},
		{"queued calls", &Options{MaxInFlight: 2, MaxQueued: 1}, []string{
			`["push",["pipeline",0,["slowAdd"],[1,1,5000]]]`,
			`["push",["pipeline",0,["slowAdd"],[1,1,5000]]]`,
			`["push",["pipeline",0,["slowAdd"],[1,1,5000]]]`,
			`["push",["pipeline",0,["slowAdd"],[1,1,5000]]]`},
			`["abort",["error","Error","more than 1 calls waiting behind 2 in flight"]]`, ErrLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := abortedWith(t, c.opts, c.frames...)
			require.Equal(t, c.want, got)
			require.ErrorIs(t, err, c.is)
			require.ErrorIs(t, err, ErrClosed)
			var ae *AbortError
			require.ErrorAs(t, err, &ae)
			require.False(t, ae.Remote)
		})
	}
}

// AbortReason words what the peer is told, and only that: the session's
// own error keeps the cause, for the host.
func TestAbortReasonWordsTheAbortSent(t *testing.T) {
	CheckLeaks(t)
	var seen error
	opts := &Options{MaxMessageSize: 100, AbortReason: func(reason error) error {
		seen = reason
		return Errorf(NameRangeError, map[string]any{"code": "limit"}, "past a limit: %s", WireMessage(reason))
	}}
	got, err := abortedWith(t, opts, `["push","`+strings.Repeat("x", 200)+`"]`)
	require.Equal(t, `["abort",["error","RangeError","past a limit: message of 211 bytes exceeds the limit of 100",null,{"code":"limit"}]]`, got)
	require.ErrorIs(t, seen, ErrLimit)
	require.ErrorIs(t, err, ErrLimit)
	require.NotContains(t, err.Error(), "past a limit")
}

func TestSendRefusesWhatJavaScriptWouldLose(t *testing.T) {
	CheckLeaks(t)
	a, b := memPipe()
	server, err := NewSession(a, &labAPI{events: make(chan string, 16)}, nil)
	require.NoError(t, err)
	defer server.Close()
	client, err := NewSession(b, nil, nil)
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	main := client.Main()
	defer main.Release()
	for name, v := range map[string]any{
		"callable then":     map[string]any{"then": Func(nil)},
		"unsafe integer":    int64(1) << 60,
		"channel":           make(chan int),
		"non-string keys":   map[int]string{1: "a"},
		"unknown container": TypedBytes{Type: "Map"},
	} {
		_, err := main.CallMethod(ctx, "echo", v)
		require.ErrorIs(t, err, ErrUnsupported, name)
	}
	// Nothing was sent for them: the session is still healthy.
	v, err := main.CallMethod(ctx, "add", 1, 2)
	require.NoError(t, err)
	require.Equal(t, 3.0, v)
	// Keys JavaScript would drop on receipt are dropped on the way out.
	v, err = main.CallMethod(ctx, "echo", map[string]any{"constructor": 1, "ok": 2})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"ok": 2.0}, v)
	v, err = main.CallMethod(ctx, "echo", struct{ ToString, OK int }{1, 2})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"ok": 2.0}, v)
	// A Go method whose result cannot be sent rejects that call only.
	_, err = main.CallMethod(ctx, "thenTrap")
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	require.Contains(t, re.Message, `callable "then"`)
	// A wrong argument type is a TypeError naming the argument.
	_, err = main.CallMethod(ctx, "add", "one", 2)
	require.ErrorAs(t, err, &re)
	require.Equal(t, "TypeError", re.Name)
	require.Equal(t, "argument 1: expected number, got string", re.Message)
}

func TestStubLifetimeErrors(t *testing.T) {
	CheckLeaks(t)
	a, b := memPipe()
	server, err := NewSession(a, &labAPI{events: make(chan string, 16)}, nil)
	require.NoError(t, err)
	client, err := NewSession(b, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	main := client.Main()
	v, err := main.CallMethod(ctx, "makeCounter", 1)
	require.NoError(t, err)
	c := v.(*Stub)
	d := c.Dup()
	c.Release()
	c.Release() // idempotent
	_, err = c.CallMethod(ctx, "increment", 1)
	require.ErrorIs(t, err, ErrReleased)
	v, err = d.CallMethod(ctx, "increment", 1)
	require.NoError(t, err, "a Dup outlives the original")
	require.Equal(t, 2.0, v)
	d.Release()

	require.NoError(t, client.Close())
	require.NoError(t, client.Close(), "Close is idempotent")
	_, err = main.CallMethod(ctx, "add", 1, 2)
	require.ErrorIs(t, err, ErrClosed)
	<-server.Done()
	var ae *AbortError
	require.ErrorAs(t, server.Err(), &ae)
	require.True(t, ae.Remote)
	var ce *CloseError
	require.ErrorAs(t, server.Err(), &ce)
	require.NoError(t, server.Close())
}

// blocker is a server whose calls wait for their context.
type blocker struct {
	started chan struct{}
	ended   chan error
	once    sync.Once
}

func (b *blocker) Wait(ctx context.Context) error {
	b.once.Do(func() { close(b.started) })
	<-ctx.Done()
	b.ended <- ctx.Err()
	return ctx.Err()
}

func (b *blocker) Dispose() { b.ended <- errors.New("disposed") }

func TestCloseCancelsCallsAndWaits(t *testing.T) {
	CheckLeaks(t)
	a, b := memPipe()
	bl := &blocker{started: make(chan struct{}), ended: make(chan error, 4)}
	server, err := NewSession(a, bl, nil)
	require.NoError(t, err)
	client, err := NewSession(b, nil, nil)
	require.NoError(t, err)
	defer client.Close()
	main := client.Main()
	p := main.Pipeline([]string{"wait"}, []any{})
	<-bl.started
	require.NoError(t, server.Close())
	// Close returned: the call already saw its context end, and main was
	// disposed.
	require.Len(t, bl.ended, 2)
	got := []string{(<-bl.ended).Error(), (<-bl.ended).Error()}
	require.ElementsMatch(t, []string{context.Canceled.Error(), "disposed"}, got)
	_, err = p.Await(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	p.Release()
	main.Release()
}

func TestJSNumberFormatting(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 1: "1", -1: "-1", 1.5: "1.5", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 1.5e-7: "1.5e-7", 0.000001: "0.000001", 123456789012345680000: "123456789012345680000",
		-1.25e-10: "-1.25e-10", math.MaxFloat64: "1.7976931348623157e+308", 5e-324: "5e-324",
	} {
		require.Equal(t, want, string(appendJSNumber(nil, f)), "%v", f)
	}
	require.Equal(t, `"a\"b\\c\n\u0001<>&\u2028"`, strings.ReplaceAll(string(appendJSString(nil, "a\"b\\c\n\x01<>&\u2028")), "\u2028", `\u2028`))
	require.Equal(t, `"\ufffd"`, strings.ReplaceAll(string(appendJSString(nil, "\xff")), "\ufffd", `\ufffd`))
}

// oversizeAPI answers with what it is given, as a result or as an error.
type oversizeAPI struct{}

func (oversizeAPI) Hello(s string) string { return s }
func (oversizeAPI) Throw(s string) error  { return &Error{Name: NameTypeError, Message: s} }

// TestReplyPastThePeersLimitFailsTheCall: a result or an error too large
// for the peer's frames fails that call, with the size and the limit, and
// the session goes on; the peer would otherwise end it on the frame.
func TestReplyPastThePeersLimitFailsTheCall(t *testing.T) {
	CheckLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name  string
		opts  Options
		props map[string]any // besides size, which the default sets
		msg   string         // the message's end
	}{
		{"default wording", Options{PeerMaxMessageSize: 1000}, map[string]any{"limit": 1000.0},
			" bytes) is larger than the peer accepts (1000 bytes)"},
		{"host's wording", Options{PeerMaxMessageSize: 1000, OversizeReply: func(size, limit int) error {
			return Errorf(NameRangeError, map[string]any{"code": "limit_exceeded", "limit": limit, "ok": true, "nested": map[string]any{}},
				"%d past %d", size, limit)
		}}, map[string]any{"code": "limit_exceeded", "limit": 1000.0, "ok": true}, " past 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := memPipe()
			server, err := NewSession(a, oversizeAPI{}, &tc.opts)
			require.NoError(t, err)
			defer server.Close()
			client, err := NewSession(b, nil, &Options{MaxMessageSize: 1000})
			require.NoError(t, err)
			defer client.Close()
			main := client.Main()
			defer main.Release()
			for _, method := range []string{"hello", "throw"} {
				_, err = main.CallMethod(ctx, method, strings.Repeat("x", 2000))
				var re *RemoteError
				require.ErrorAs(t, err, &re, method)
				require.Equal(t, NameRangeError, re.Name, method)
				require.True(t, strings.HasSuffix(re.Message, tc.msg), "%s: %s", method, re.Message)
				if tc.opts.OversizeReply == nil {
					require.Greater(t, re.Props["size"], 2000.0, method)
					delete(re.Props, "size")
				}
				require.Equal(t, tc.props, re.Props, method)
				// The session goes on.
				v, err := main.CallMethod(ctx, method, "small")
				if method == "hello" {
					require.NoError(t, err)
					require.Equal(t, "small", v)
				} else {
					require.ErrorAs(t, err, &re)
					require.Equal(t, "small", re.Message)
				}
			}
			require.NoError(t, server.Err())
		})
	}
}
