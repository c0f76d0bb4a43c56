package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
)

// uiCap is a test capability: notify answers at once, wait blocks until
// its context ends and records why.
type uiCap struct {
	p       Principal
	waiting chan struct{}
	ended   chan error
}

func (u *uiCap) Notify(msg string) (string, error) { return u.p.RunID + ":" + msg, nil }

func (u *uiCap) Wait(ctx context.Context) error {
	close(u.waiting)
	<-ctx.Done()
	u.ended <- ctx.Err()
	return ctx.Err()
}

type clipCap struct{}

func (clipCap) Read() string { return "clip" }

// rig is a bridge with counting factories.
type rig struct {
	b         *Bridge
	factories atomic.Int32
	ui        chan *uiCap
	logs      *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	r := &rig{ui: make(chan *uiCap, 16), logs: &syncBuf{}}
	reg := &Registry{}
	require.NoError(t, reg.Register(permissions.CapUI, func(_ context.Context, p Principal) (any, error) {
		r.factories.Add(1)
		u := &uiCap{p: p, waiting: make(chan struct{}), ended: make(chan error, 1)}
		r.ui <- u
		return u, nil
	}, AudienceRunner))
	require.NoError(t, reg.Register(permissions.CapClipboard, func(context.Context, Principal) (any, error) {
		r.factories.Add(1)
		return clipCap{}, nil
	}, AudienceRunner))
	// Registered for webviews only: never visible to a run.
	require.NoError(t, reg.Register(permissions.CapConfig, func(context.Context, Principal) (any, error) {
		r.factories.Add(1)
		return clipCap{}, nil
	}))
	cfg.Registry = reg
	cfg.Logger = slog.New(slog.NewTextHandler(r.logs, nil))
	b, err := New(cfg)
	require.NoError(t, err)
	r.b = b
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return r
}

func principal(runID string, caps ...permissions.Capability) Principal {
	return Principal{RunID: runID, ScriptPath: "/s/" + runID + ".ts", ScriptDir: "/s", Permitted: caps}
}

func hello(caps ...permissions.Capability) string {
	b, _ := json.Marshal(Hello{Protocol: 1, SDK: "0.1.0", Capabilities: caps})
	return string(b)
}

var allCaps = []permissions.Capability{permissions.CapUI, permissions.CapClipboard, permissions.CapConfig, permissions.CapContext, permissions.CapTabs}

// dial upgrades a connection the way the SDK does (no Origin).
func dial(t *testing.T, b *Bridge, header http.Header) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, b.URL(), &websocket.DialOptions{HTTPHeader: header})
	require.NoError(t, err)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// auth sends AUTH and returns the reply, or the close error.
func auth(t *testing.T, c *websocket.Conn, token, hello string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte("AUTH "+token+" "+hello)); err != nil {
		return "", err
	}
	_, reply, err := c.Read(ctx)
	return string(reply), err
}

// refused asserts the connection was closed with the generic failure.
func refused(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, StatusAuthFailed, websocket.CloseStatus(err), "closed with 1008: %v", err)
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		assert.Equal(t, "authentication failed", ce.Reason)
	}
}

func (r *rig) nothingReachedCapnweb(t *testing.T) {
	t.Helper()
	assert.Zero(t, r.b.Stats().SessionsStarted, "no session was started")
	assert.Zero(t, r.factories.Load(), "no capability was built")
}

// uiSession is the session of a run "run1" permitted ui alone, through
// b's whole handshake; it is closed when the test ends.
func uiSession(t *testing.T, b *Bridge) *capnweb.Session {
	t.Helper()
	tok, err := b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	c := dial(t, b, nil)
	_, err = auth(t, c, tok, hello(allCaps...))
	require.NoError(t, err)
	sess, err := capnweb.NewSession(wsconn.New(c, 0), nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

func TestHandshakeOK(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI, permissions.CapClipboard, permissions.CapConfig))
	require.NoError(t, err)
	assert.Len(t, tok, TokenLen)
	c := dial(t, r.b, nil)
	reply, err := auth(t, c, tok, hello(allCaps...))
	require.NoError(t, err)
	// config is permitted but registered for webviews only: the session
	// cannot reach it, so it is not in the list either.
	assert.Equal(t, `OK {"protocol":1,"granted":["clipboard","ui"]}`, reply)

	sess, err := capnweb.NewSession(wsconn.New(c, 0), nil, nil)
	require.NoError(t, err)
	defer sess.Close()
	ctx := context.Background()
	got, err := sess.Main().Pipeline([]string{"ui", "notify"}, []any{"hi"}).Await(ctx)
	require.NoError(t, err)
	assert.Equal(t, "run1:hi", got)
	// Granted but registered for webviews only, and not granted at all:
	// both absent.
	for _, name := range []string{"config", "tabs", "constructor"} {
		v, err := sess.Main().Get(ctx, name)
		require.NoError(t, err, name)
		assert.Equal(t, capnweb.Undefined{}, v, "%s is absent", name)
	}
	assert.Equal(t, int64(1), r.b.Stats().SessionsStarted)
}

func TestHandshakeRejections(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		run  func(t *testing.T, r *rig, tok string) error
	}{
		{"wrong token", Config{}, func(t *testing.T, r *rig, tok string) error {
			other := strings.Repeat("a", TokenLen)
			_, err := auth(t, dial(t, r.b, nil), other, hello(allCaps...))
			return err
		}},
		{"malformed token", Config{}, func(t *testing.T, r *rig, tok string) error {
			_, err := auth(t, dial(t, r.b, nil), strings.ToUpper(tok), hello(allCaps...))
			return err
		}},
		{"expired token", Config{TokenTTL: 30 * time.Millisecond}, func(t *testing.T, r *rig, tok string) error {
			r.b.tokens.mu.Lock()
			r.b.tokens.now = func() time.Time { return time.Now().Add(time.Minute) } // past the TTL
			r.b.tokens.mu.Unlock()
			_, err := auth(t, dial(t, r.b, nil), tok, hello(allCaps...))
			return err
		}},
		{"revoked token", Config{}, func(t *testing.T, r *rig, tok string) error {
			assert.Equal(t, 1, r.b.Revoke("run1"))
			_, err := auth(t, dial(t, r.b, nil), tok, hello(allCaps...))
			return err
		}},
		{"late AUTH", Config{HandshakeTimeout: 150 * time.Millisecond}, func(t *testing.T, r *rig, tok string) error {
			c := dial(t, r.b, nil)
			// The bridge gives up on the silent handshake.
			require.Eventually(t, func() bool { return r.b.Stats().Pending == 0 }, 5*time.Second, time.Millisecond)
			_, err := auth(t, c, tok, hello(allCaps...))
			require.Error(t, err)
			return nil
		}},
		{"binary first frame", Config{}, func(t *testing.T, r *rig, tok string) error {
			c := dial(t, r.b, nil)
			require.NoError(t, c.Write(context.Background(), websocket.MessageBinary, []byte("AUTH "+tok+" "+hello(allCaps...))))
			_, _, err := c.Read(context.Background())
			return err
		}},
		{"oversized first frame", Config{}, func(t *testing.T, r *rig, tok string) error {
			_, err := auth(t, dial(t, r.b, nil), tok, `{"protocol":1,"sdk":"x","capabilities":[],"pad":"`+strings.Repeat("x", 8000)+`"}`)
			return err
		}},
		{"huge first frame", Config{}, func(t *testing.T, r *rig, tok string) error {
			_, err := auth(t, dial(t, r.b, nil), tok, strings.Repeat("x", 4<<20))
			return err
		}},
		{"rpc frame before AUTH", Config{}, func(t *testing.T, r *rig, tok string) error {
			c := dial(t, r.b, nil)
			require.NoError(t, c.Write(context.Background(), websocket.MessageText, []byte(`["push",["pipeline",0,["ui","notify"],["x"]]]`)))
			_, _, err := c.Read(context.Background())
			return err
		}},
		{"bad hello", Config{}, func(t *testing.T, r *rig, tok string) error {
			_, err := auth(t, dial(t, r.b, nil), tok, `{"protocol":2,"sdk":"x","capabilities":[]}`)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.cfg)
			tok, err := r.b.Mint(principal("run1", permissions.CapUI))
			require.NoError(t, err)
			if err := tc.run(t, r, tok); err != nil {
				refused(t, err)
			}
			r.nothingReachedCapnweb(t)
		})
	}
}

func TestDefaultHandshakeTimeout(t *testing.T) {
	t.Parallel()
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	c := dial(t, r.b, nil)
	start := time.Now()
	_, _, err = c.Read(context.Background())
	require.Error(t, err, "a silent client is dropped")
	assert.InDelta(t, DefaultHandshakeTimeout.Seconds(), time.Since(start).Seconds(), 0.5)
	_, err = auth(t, c, tok, hello(permissions.CapUI))
	require.Error(t, err)
	r.nothingReachedCapnweb(t)
}

func TestReplayedToken(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	reply, err := auth(t, dial(t, r.b, nil), tok, hello(allCaps...))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(reply, "OK "))
	_, err = auth(t, dial(t, r.b, nil), tok, hello(allCaps...))
	refused(t, err)
	// The replay was refused before any session could start, so once the
	// first session has started the count is final.
	require.Eventually(t, func() bool { return r.b.Stats().SessionsStarted == 1 }, time.Second, time.Millisecond)
	assert.Equal(t, int64(1), r.b.Stats().SessionsStarted, "only the first claim reached capnweb")
}

func TestConcurrentClaimsExactlyOneWins(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	const n = 16
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		conns[i] = dial(t, r.b, nil)
	}
	var wins, losses atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			reply, err := auth(t, c, tok, hello(allCaps...))
			if err == nil && strings.HasPrefix(reply, "OK ") {
				wins.Add(1)
			} else if websocket.CloseStatus(err) == StatusAuthFailed {
				losses.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load())
	assert.Equal(t, int32(n-1), losses.Load())
}

// rawUpgrade sends a hand-written upgrade request and returns the status.
func rawUpgrade(t *testing.T, addr, method, path string, headers map[string]string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, path)
	if _, ok := headers["Host"]; !ok {
		headers["Host"] = addr
	}
	for k, v := range map[string]string{"Upgrade": "websocket", "Connection": "Upgrade",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"} {
		if _, ok := headers[k]; !ok {
			headers[k] = v
		}
	}
	for k, v := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	_, err = io.WriteString(c, b.String())
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestUpgradeChecks(t *testing.T) {
	r := newRig(t, Config{})
	addr := r.b.Addr()
	port := addr[strings.LastIndex(addr, ":")+1:]
	assert.Equal(t, http.StatusSwitchingProtocols, rawUpgrade(t, addr, "GET", DefaultPath, map[string]string{}), "the well-formed request is accepted")
	assert.Equal(t, http.StatusSwitchingProtocols, rawUpgrade(t, addr, "GET", DefaultPath, map[string]string{"Host": "localhost:" + port}))
	for name, tc := range map[string]struct {
		method, path string
		headers      map[string]string
		status       int
	}{
		"origin":             {"GET", DefaultPath, map[string]string{"Origin": "http://127.0.0.1:" + port}, 403},
		"null origin":        {"GET", DefaultPath, map[string]string{"Origin": "null"}, 403},
		"referer":            {"GET", DefaultPath, map[string]string{"Referer": "http://evil.example/"}, 403},
		"fetch metadata":     {"GET", DefaultPath, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		"rebinding host":     {"GET", DefaultPath, map[string]string{"Host": "evil.example:" + port}, 403},
		"prefix host":        {"GET", DefaultPath, map[string]string{"Host": "127.0.0.1.evil.example:" + port}, 403},
		"other port":         {"GET", DefaultPath, map[string]string{"Host": "127.0.0.1:1"}, 403},
		"no port":            {"GET", DefaultPath, map[string]string{"Host": "127.0.0.1"}, 403},
		"empty host port":    {"GET", DefaultPath, map[string]string{"Host": ":" + port}, 403},
		"ipv6 loopback host": {"GET", DefaultPath, map[string]string{"Host": "[::1]:" + port}, 403},
		"lan host":           {"GET", DefaultPath, map[string]string{"Host": "192.168.1.5:" + port}, 403},
		"post":               {"POST", DefaultPath, map[string]string{}, 405},
		"wrong path":         {"GET", "/", map[string]string{}, 404},
		"query":              {"GET", DefaultPath + "?token=x", map[string]string{}, 404},
	} {
		assert.Equal(t, tc.status, rawUpgrade(t, addr, tc.method, tc.path, tc.headers), name)
	}
	// A browser-style client through the WebSocket library is refused too.
	ctx := context.Background()
	_, resp, err := websocket.Dial(ctx, r.b.URL(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	require.Error(t, err)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	r.nothingReachedCapnweb(t)
	assert.Contains(t, r.logs.String(), "origin header present", "the real reason is logged on the host")
}

func TestIdleConnectionsCannotLockOut(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	for range 200 {
		dial(t, r.b, nil)
	}
	require.Eventually(t, func() bool { return r.b.Stats().Pending == 200 }, 5*time.Second, 5*time.Millisecond)
	start := time.Now()
	c := dial(t, r.b, nil)
	reply, err := auth(t, c, tok, hello(allCaps...))
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(reply, "OK "))
	assert.Less(t, elapsed, 100*time.Millisecond, "authenticated within 100 ms of connecting")
}

func TestPendingTableEvictsOldest(t *testing.T) {
	r := newRig(t, Config{MaxPending: 8})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	first := dial(t, r.b, nil)
	for range 20 {
		dial(t, r.b, nil)
	}
	require.Eventually(t, func() bool { return r.b.Stats().Pending <= 8 }, 5*time.Second, 5*time.Millisecond)
	_, _, err = first.Read(context.Background())
	require.Error(t, err, "the oldest silent connection was dropped")
	reply, err := auth(t, dial(t, r.b, nil), tok, hello(allCaps...))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(reply, "OK "))
}

// dialURL upgrades a connection to url the way the SDK does.
func dialURL(t *testing.T, url string) (*websocket.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err == nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, err
}

func TestRunRoutes(t *testing.T) {
	r := newRig(t, Config{})
	addr := r.b.Addr()
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	other, err := r.b.Mint(principal("run2", permissions.CapUI))
	require.NoError(t, err)
	route := strings.TrimPrefix(r.b.RunURL(tok), r.b.URL())
	require.Regexp(t, "^/[0-9a-f]{32}$", route)
	assert.NotContains(t, r.b.RunURL(tok), tok, "the token never appears in the URL")

	for name, path := range map[string]string{
		"made-up route":  DefaultPath + "/" + strings.Repeat("ab", 16),
		"short route":    DefaultPath + "/abc",
		"upper case":     DefaultPath + strings.ToUpper(route),
		"nested":         DefaultPath + route + "/x",
		"no separator":   DefaultPath + route[1:],
		"trailing slash": DefaultPath + "/",
	} {
		assert.Equal(t, http.StatusNotFound, rawUpgrade(t, addr, "GET", path, map[string]string{}), name)
	}
	assert.Equal(t, 0, r.b.Stats().Pending, "a refused route never took a pending slot")

	c, err := dialURL(t, r.b.RunURL(tok))
	require.NoError(t, err)
	_, err = auth(t, c, other, hello(allCaps...))
	refused(t, err)
	assert.Contains(t, r.logs.String(), "token of another route")

	c, err = dialURL(t, r.b.RunURL(tok))
	require.NoError(t, err)
	reply, err := auth(t, c, tok, hello(allCaps...))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(reply, "OK "), reply)
	assert.Equal(t, http.StatusNotFound, rawUpgrade(t, addr, "GET", DefaultPath+route, map[string]string{}), "a claimed token's route is gone")
}

func TestRunRouteBoundEvictsOnlyItsOwn(t *testing.T) {
	r := newRig(t, Config{MaxPending: 2, MaxPendingPerRun: 2})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	victim, err := r.b.Mint(principal("run2", permissions.CapUI))
	require.NoError(t, err)
	waiting, err := dialURL(t, r.b.RunURL(victim))
	require.NoError(t, err)
	first, err := dialURL(t, r.b.RunURL(tok))
	require.NoError(t, err)
	for range 10 {
		_, err := dialURL(t, r.b.RunURL(tok))
		require.NoError(t, err)
		dial(t, r.b, nil)
	}
	require.Eventually(t, func() bool { return r.b.Stats().Pending == 5 }, 5*time.Second, 5*time.Millisecond, "two shared, two of run1, one of run2")
	_, _, err = first.Read(context.Background())
	require.Error(t, err, "run1's oldest was dropped by run1's own connections")
	reply, err := auth(t, waiting, victim, hello(allCaps...))
	require.NoError(t, err, "run2's handshake outlived both floods")
	assert.True(t, strings.HasPrefix(reply, "OK "), reply)
}

func TestDenyWhenSDKLacksCapability(t *testing.T) {
	r := newRig(t, Config{})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI, permissions.CapTabs))
	require.NoError(t, err)
	c := dial(t, r.b, nil)
	reply, err := auth(t, c, tok, hello(permissions.CapUI))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(reply, "DENY "), reply)
	var d Denied
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(reply, "DENY ")), &d))
	assert.Equal(t, []permissions.Capability{permissions.CapTabs}, d.Missing)
	assert.Equal(t, "0.1.0", d.SDK)
	assert.Contains(t, d.Reason, "tabs")
	_, _, err = c.Read(context.Background())
	assert.Equal(t, StatusDenied, websocket.CloseStatus(err))
	r.nothingReachedCapnweb(t)
}

// oneSessionTaken is a bridge of one session, run1's, with run2's token
// minted.
func oneSessionTaken(t *testing.T, handshake time.Duration) (*rig, string) {
	t.Helper()
	r := newRig(t, Config{MaxSessions: 1, HandshakeTimeout: handshake})
	t1, _ := r.b.Mint(principal("run1", permissions.CapUI))
	t2, _ := r.b.Mint(principal("run2", permissions.CapUI))
	reply, err := auth(t, dial(t, r.b, nil), t1, hello(allCaps...))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(reply, "OK "))
	return r, t2
}

func TestSessionLimit(t *testing.T) {
	r, t2 := oneSessionTaken(t, 500*time.Millisecond)
	require.Eventually(t, func() bool { return r.b.Stats().Sessions == 1 }, time.Second, time.Millisecond)
	_, err := auth(t, dial(t, r.b, nil), t2, hello(allCaps...))
	assert.Equal(t, StatusBusy, websocket.CloseStatus(err))
	assert.Equal(t, 1, r.b.Stats().Tokens, "a busy refusal does not burn the token")
}

func TestSessionLimitWaitsForASlot(t *testing.T) {
	r, t2 := oneSessionTaken(t, 10*time.Second)
	second := make(chan error, 1)
	go func() {
		reply, err := auth(t, dial(t, r.b, nil), t2, hello(allCaps...))
		if err == nil && !strings.HasPrefix(reply, "OK ") {
			err = fmt.Errorf("reply %q", reply)
		}
		second <- err
	}()
	require.Eventually(t, func() bool {
		r.b.mu.Lock()
		defer r.b.mu.Unlock()
		return r.b.freed != nil // made by a handshake that waits for a slot
	}, 5*time.Second, time.Millisecond, "the second run never waited for a slot")
	select {
	case err := <-second:
		t.Fatalf("the second run did not wait for the first to end: %v", err)
	default:
	}
	// The first run ends: its slot goes to the one waiting.
	r.b.Revoke("run1")
	select {
	case err := <-second:
		require.NoError(t, err)
	case <-time.After(8 * time.Second):
		t.Fatal("the waiting run never got the freed slot")
	}
}

func TestRefusalsAreSummarised(t *testing.T) {
	r := newRig(t, Config{})
	const n = 40
	for range n {
		_, err := auth(t, dial(t, r.b, nil), strings.Repeat("a", TokenLen), hello(allCaps...))
		refused(t, err)
	}
	require.NoError(t, r.b.Close())
	logs := r.logs.String()
	assert.Equal(t, refusalBurst, strings.Count(logs, `msg="rpc: refused connection: token rejected"`), logs)
	assert.Equal(t, 1, strings.Count(logs, "refused more connections than were logged"), logs)
	assert.Contains(t, logs, fmt.Sprintf("count=%d", n-refusalBurst))
	assert.Contains(t, logs, fmt.Sprintf(`"reasons.rpc: refused connection: token rejected"=%d`, n-refusalBurst))
}

func TestRevokeEndsLiveCallOnBothSides(t *testing.T) {
	testenv.CheckGoroutines(t)
	r := newRig(t, Config{})
	sess := uiSession(t, r.b)
	callErr := make(chan error, 1)
	go func() {
		_, err := sess.Main().Pipeline([]string{"ui", "wait"}, []any{}).Await(context.Background())
		callErr <- err
	}()
	ui := <-r.ui
	<-ui.waiting
	assert.Equal(t, 1, r.b.Revoke("run1"))
	select {
	case err := <-ui.ended:
		assert.ErrorIs(t, err, context.Canceled, "the host side's call was cancelled")
	case <-time.After(5 * time.Second):
		t.Fatal("host call not cancelled")
	}
	select {
	case err := <-callErr:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "revoked", "the client sees why")
	case <-time.After(5 * time.Second):
		t.Fatal("client call did not fail")
	}
	require.Eventually(t, func() bool { return r.b.Stats().Sessions == 0 }, 5*time.Second, time.Millisecond)
}

func TestCloseEndsEverythingAndWaits(t *testing.T) {
	testenv.CheckGoroutines(t)
	r := &rig{}
	reg := &Registry{}
	built := make(chan *uiCap, 1)
	require.NoError(t, reg.Register(permissions.CapUI, func(_ context.Context, p Principal) (any, error) {
		u := &uiCap{p: p, waiting: make(chan struct{}), ended: make(chan error, 1)}
		built <- u
		return u, nil
	}, AudienceRunner))
	b, err := New(Config{Registry: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	r.b = b
	tok, _ := b.Mint(principal("run1", permissions.CapUI))
	c := dial(t, b, nil)
	_, err = auth(t, c, tok, hello(allCaps...))
	require.NoError(t, err)
	idle := dial(t, b, nil)
	sess, err := capnweb.NewSession(wsconn.New(c, 0), nil, nil)
	require.NoError(t, err)
	go sess.Main().Pipeline([]string{"ui", "wait"}, []any{}).Await(context.Background())
	<-(<-built).waiting // the call is running on the host
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "idempotent")
	<-sess.Done()
	sess.Close()
	_, _, err = idle.Read(context.Background())
	require.Error(t, err)
	idle.CloseNow()
	_, err = b.Mint(principal("run2"))
	require.ErrorIs(t, err, ErrClosed)
}

func TestNewRefusesNonLoopback(t *testing.T) {
	for _, a := range []string{"0.0.0.0:0", "localhost:0", ":0", "[::1]:0", "192.168.1.1:0"} {
		_, err := New(Config{Addr: a})
		assert.Error(t, err, a)
	}
}

// A session that goes past its memory budget ends, and the script's calls
// fail with limit_exceeded, as a call refused for a limit does: a script
// that catches the first and calls again before its process is stopped
// must not see a bare Error (a sweep once counted such calls as answered).
func TestSessionPastItsBudgetFailsCallsAsLimitExceeded(t *testing.T) {
	testenv.CheckGoroutines(t)
	r := newRig(t, Config{MaxMemory: 1 << 20})
	sess := uiSession(t, r.b)
	big := strings.Repeat("x", 2<<20)
	for i, args := range [][]any{{big}, {"after"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := sess.Main().Pipeline([]string{"ui", "notify"}, args).Await(ctx)
		cancel()
		var re *capnweb.RemoteError
		require.ErrorAs(t, err, &re, "call %d", i)
		assert.Equal(t, "limit_exceeded", re.Props["code"], "call %d: %v", i, err)
		assert.Equal(t, capnweb.NameRangeError, re.Name, "call %d", i)
		assert.Contains(t, re.Message, "memory budget", "call %d: the reason says which limit", i)
		assert.EqualValues(t, 1<<20, re.Props["limit"], "call %d: the limit met", i)
	}
}
