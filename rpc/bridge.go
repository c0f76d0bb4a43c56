package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
)

// Defaults of [Config].
const (
	DefaultPath             = "/tranquil/rpc"
	DefaultTokenTTL         = 60 * time.Second
	DefaultHandshakeTimeout = 3 * time.Second
	DefaultMaxSessions      = 64
	DefaultMaxPending       = 256
	DefaultMaxPendingPerRun = 4
	DefaultMaxInFlight      = 256
	// DefaultReadLimit bounds one frame from a script after AUTH: 32 MiB,
	// room for a full-page screenshot or a large file passed as base64.
	DefaultReadLimit = 32 << 20
)

// WebSocket close codes the bridge uses. The SDK treats StatusDenied as
// fatal: it prints the reason and never retries.
const (
	StatusAuthFailed = websocket.StatusPolicyViolation // 1008, any handshake failure
	StatusDenied     = websocket.StatusCode(4001)      // capabilities the SDK lacks
	StatusBusy       = websocket.StatusTryAgainLater   // 1013, too many sessions
)

// ErrRevoked is the reason a revoked run's session ends with.
var ErrRevoked = errors.New("rpc: run revoked")

// ErrClosed reports use of a closed Bridge.
var ErrClosed = errors.New("rpc: bridge closed")

// Config configures a Bridge. The zero value is usable.
type Config struct {
	// Addr is the listen address; it must be a 127.0.0.1 address. Empty
	// means "127.0.0.1:0" (any free port).
	Addr string
	// Path is the WebSocket endpoint. Empty means DefaultPath.
	Path string
	// Registry holds the capabilities sessions may receive. Nil means none.
	Registry *Registry
	// TokenTTL is how long a minted token may stay unclaimed. Zero means
	// DefaultTokenTTL.
	TokenTTL time.Duration
	// HandshakeTimeout bounds the time from connect to a complete AUTH
	// frame. Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxSessions bounds authenticated sessions. A connection finding
	// them all taken waits, within HandshakeTimeout, for one to end, and
	// is refused with StatusBusy only then. Zero means DefaultMaxSessions.
	MaxSessions int
	// MaxPending bounds connections still in the handshake on the shared
	// path (URL). When full, the oldest of them is dropped, so silent
	// clients cannot lock out a real one. Zero means DefaultMaxPending.
	MaxPending int
	// MaxConnecting bounds the connections that have not yet sent a
	// whole WebSocket upgrade request (each a file descriptor and a
	// goroutine); past it the oldest is closed, so a flood of silent
	// connections from a script cannot lock out a real client. Zero means
	// DefaultMaxConnecting (1024).
	MaxConnecting int
	// MaxPendingPerRun bounds the connections in the handshake on one
	// run's own path (RunURL); when full, that run's oldest is dropped.
	// Connections elsewhere never count against it, so no flood can evict
	// a run's handshake. Zero means DefaultMaxPendingPerRun.
	MaxPendingPerRun int
	// MaxInFlight bounds concurrent calls per session. Zero means
	// DefaultMaxInFlight.
	MaxInFlight int
	// ReadLimit bounds a frame after AUTH. Zero means DefaultReadLimit.
	ReadLimit int64
	// MaxMemory is each session's memory budget: what a script can make
	// the host hold or build through its session (see capnweb's
	// Options.MaxMemory). Past it the session aborts with capnweb.ErrLimit
	// and the bridge logs why. Zero means capnweb.DefaultMaxMemory. A host
	// holds at most MaxSessions × (MaxMemory + ReadLimit) for its sessions,
	// plus a fixed overhead per session.
	MaxMemory int64
	// Logger receives the real reason for every refused connection (the
	// client only ever sees a generic one). Nil means slog.Default().
	Logger *slog.Logger
	// Tune chooses how connections are tuned (wsconn.TuneOptions: the
	// delayed-ACK stall, the linger after an abort). Nil is right for hosts;
	// tests and benchmarks set NoQuickAck to see what macOS and Windows see.
	Tune *wsconn.TuneOptions
	// OnSession, if set, is called once a run's session has started, on
	// the connection's goroutine; it must not block.
	// The run manager uses it to reach the script's own main object (its
	// control stub). The session ends when its Done channel closes.
	OnSession func(p Principal, s *capnweb.Session)
	// CallContext is every session's capnweb Options.CallContext; nil for none.
	CallContext func(ctx context.Context, args []any) (context.Context, []any)
}

// Bridge is the per-window loopback server scripts reach the host through.
//
// It owns these goroutines: one serving HTTP, one per connection (the
// handshake, then the session's lifetime), and each session's own reader
// and writer. Close stops all of them and waits.
type Bridge struct {
	cfg    Config
	ln     net.Listener
	srv    *http.Server
	port   uint16
	tokens tokenTable
	log    *slog.Logger
	refuse refusalLog
	conns  *connecting // connections not yet upgraded

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	sessions map[*live]struct{}
	pending  []*pendingConn           // handshakes on the shared path, oldest first
	routes   map[route][]*pendingConn // handshakes on each run's route, oldest first
	revoked  map[string]time.Time
	freed    chan struct{} // closed when a session slot frees; nil when none waits

	started atomic.Int64
}

type live struct {
	runID   string
	granted []permissions.Capability
	sess    *capnweb.Session // nil until started; guarded by Bridge.mu
	doomed  bool             // revoked before the session started
}

type pendingConn struct {
	cancel context.CancelFunc
	route  route // the run's route; zero on the shared path
	routed bool
}

// Stats is a snapshot of a Bridge's state.
type Stats struct {
	Sessions        int   // authenticated sessions now
	Connecting      int   // connections that have not yet upgraded to a WebSocket
	ConnectingShed  int64 // of those, closed for Config.MaxConnecting, ever
	Pending         int   // connections in the handshake now
	Tokens          int   // unclaimed tokens
	SessionsStarted int64 // sessions ever handed to Cap'n Web
}

// New starts a Bridge listening on cfg.Addr.
func New(cfg Config) (*Bridge, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	ap, err := netip.ParseAddrPort(cfg.Addr)
	if err != nil || ap.Addr() != netip.MustParseAddr("127.0.0.1") {
		return nil, fmt.Errorf("rpc: listen address %q is not 127.0.0.1:<port>", cfg.Addr)
	}
	if cfg.Path == "" {
		cfg.Path = DefaultPath
	}
	if cfg.Registry == nil {
		cfg.Registry = &Registry{}
	}
	setDefault(&cfg.TokenTTL, DefaultTokenTTL)
	setDefault(&cfg.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&cfg.MaxSessions, DefaultMaxSessions)
	setDefault(&cfg.MaxPending, DefaultMaxPending)
	setDefault(&cfg.MaxPendingPerRun, DefaultMaxPendingPerRun)
	setDefault(&cfg.MaxConnecting, DefaultMaxConnecting)
	setDefault(&cfg.MaxInFlight, DefaultMaxInFlight)
	setDefault(&cfg.ReadLimit, DefaultReadLimit)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("rpc: %w", err)
	}
	b := &Bridge{
		cfg:      cfg,
		ln:       ln,
		port:     uint16(ln.Addr().(*net.TCPAddr).Port),
		tokens:   tokenTable{ttl: cfg.TokenTTL, now: time.Now},
		log:      cfg.Logger,
		refuse:   refusalLog{log: cfg.Logger},
		sessions: map[*live]struct{}{},
		routes:   map[route][]*pendingConn{},
		revoked:  map[string]time.Time{},
		conns:    newConnecting(cfg.MaxConnecting),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.srv = &http.Server{
		Handler:           b,
		ConnState:         b.conns.state,
		ReadHeaderTimeout: cfg.HandshakeTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		// Every connection acknowledges reads it has no reply for at
		// once (TCP_QUICKACK on Linux, a pong elsewhere): a client's
		// small frames otherwise stall 40 ms per call.
		b.srv.Serve(wsconn.TuneListener(ln, cfg.Tune))
	}()
	return b, nil
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Addr returns the listener's address, "127.0.0.1:<port>".
func (b *Bridge) Addr() string { return b.ln.Addr().String() }

// URL returns the shared WebSocket URL. Any client with a token may dial
// it, but its handshakes share one pending table; give runs RunURL.
func (b *Bridge) URL() string { return "ws://" + b.Addr() + b.cfg.Path }

// RunURL returns the URL the run holding token dials: URL plus a route
// derived one-way from the token. Only connections on that route count
// against the run's own pending bound (Config.MaxPendingPerRun), so a
// flood from anyone else, on the shared path, cannot evict its handshake.
// A route whose token is unknown, claimed or expired is refused before the
// upgrade, and the AUTH frame on a route must carry that route's token.
func (b *Bridge) RunURL(token string) string { return b.URL() + "/" + routeFor(token).String() }

// Mint returns a new one-time token for p. Deliver it to the run out of
// band (the environment), never in a URL or argv.
func (b *Bridge) Mint(p Principal) (string, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return "", ErrClosed
	}
	return b.tokens.mint(p)
}

// Revoke invalidates runID's unclaimed token and ends its live sessions;
// their in-flight calls fail on both sides. It reports how many tokens and
// sessions it ended.
func (b *Bridge) Revoke(runID string) int {
	n := b.tokens.revoke(runID)
	b.mu.Lock()
	now := time.Now()
	for id, at := range b.revoked {
		if now.Sub(at) > time.Minute {
			delete(b.revoked, id)
		}
	}
	// A claim may be between the token table and the session table; this
	// mark catches it when the session registers.
	b.revoked[runID] = now
	var doomed []*capnweb.Session
	for l := range b.sessions {
		if l.runID != runID {
			continue
		}
		n++
		if l.sess == nil {
			l.doomed = true
		} else {
			doomed = append(doomed, l.sess)
		}
	}
	b.mu.Unlock()
	for _, s := range doomed {
		s.Abort(ErrRevoked)
	}
	return n
}

// Stats returns a snapshot of the bridge's state.
func (b *Bridge) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	pending := len(b.pending)
	for _, q := range b.routes {
		pending += len(q)
	}
	st := Stats{Sessions: len(b.sessions), Pending: pending, Tokens: b.tokens.len(), SessionsStarted: b.started.Load()}
	st.Connecting, st.ConnectingShed = b.conns.stats()
	return st
}

// Close stops listening, ends every handshake and session, and waits for
// every goroutine the bridge started. It is idempotent.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.wg.Wait()
		return nil
	}
	b.closed = true
	var sessions []*capnweb.Session
	for l := range b.sessions {
		if l.sess != nil {
			sessions = append(sessions, l.sess)
		}
	}
	b.mu.Unlock()
	b.cancel()
	err := b.srv.Close() // hijacked WebSockets are ours to close, below
	for _, s := range sessions {
		s.Abort(ErrClosed)
	}
	b.wg.Wait()
	b.refuse.flush()
	return err
}

// ServeHTTP checks the upgrade request, runs the handshake and then the
// session. It is the bridge's handler; hosts do not call it.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	b.wg.Add(1)
	b.mu.Unlock()
	defer b.wg.Done()

	rt, routed, status, why := b.checkRequest(r)
	if status != 0 {
		// The reason's first word is its kind (method, path, host, …); the
		// rest is the client's, which must not make kinds without bound.
		kind, _, _ := strings.Cut(why, " ")
		b.refuse.warn("rpc: refused connection before upgrade ("+kind+")", "reason", why, "remote", r.RemoteAddr)
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		http.Error(w, http.StatusText(status), status)
		return
	}
	b.serveConn(w, r, rt, routed)
}

// checkRequest refuses anything but a loopback GET upgrade from a
// non-browser client: the Host must be exactly this listener (DNS
// rebinding), and browsers always send Origin or Sec-Fetch headers while
// Deno sends neither. The path is the shared one or a live run's route.
func (b *Bridge) checkRequest(r *http.Request) (rt route, routed bool, status int, why string) {
	port := strconv.Itoa(int(b.port))
	switch {
	case r.Method != http.MethodGet:
		return rt, false, http.StatusMethodNotAllowed, "method " + r.Method
	case r.URL.RawQuery != "":
		return rt, false, http.StatusNotFound, "path " + r.URL.RequestURI()
	case r.Host != "127.0.0.1:"+port && r.Host != "localhost:"+port:
		return rt, false, http.StatusForbidden, "host " + strconv.Quote(r.Host)
	case r.Header.Get("Origin") != "" || len(r.Header.Values("Origin")) > 0:
		return rt, false, http.StatusForbidden, "origin header present"
	case len(r.Header.Values("Referer")) > 0:
		return rt, false, http.StatusForbidden, "referer header present"
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Sec-Fetch-") {
			return rt, false, http.StatusForbidden, "browser fetch metadata present"
		}
	}
	if r.URL.Path == b.cfg.Path {
		return rt, false, 0, ""
	}
	rest, ok := strings.CutPrefix(r.URL.Path, b.cfg.Path+"/")
	if !ok {
		return rt, false, http.StatusNotFound, "path " + r.URL.RequestURI()
	}
	// Checked before the upgrade, so a made-up route costs no pending slot.
	if rt, ok = parseRoute(rest); !ok || !b.tokens.hasRoute(rt) {
		return rt, false, http.StatusNotFound, "unknown or used route"
	}
	return rt, true, 0, ""
}

func (b *Bridge) serveConn(w http.ResponseWriter, r *http.Request, rt route, routed bool) {
	hctx, cancel := context.WithTimeout(b.ctx, b.cfg.HandshakeTimeout)
	defer cancel()
	pc := b.addPending(&pendingConn{cancel: cancel, route: rt, routed: routed})
	defer b.removePending(pc)

	// wsconn.Accept keeps the listener's TCP_QUICKACK fix and lets the
	// session write queued frames with one system call.
	ws, err := wsconn.Accept(w, r, &websocket.AcceptOptions{}, b.cfg.ReadLimit)
	if err != nil {
		b.refuse.warn("rpc: upgrade failed", "error", err, "remote", r.RemoteAddr)
		return
	}
	c := ws.Conn()
	fail := func(why string, args ...any) {
		b.refuse.warn("rpc: refused connection: "+why, append(args, "remote", r.RemoteAddr)...)
		if hctx.Err() != nil {
			c.CloseNow() // silent or slow client: no close handshake to wait on
			return
		}
		c.Close(StatusAuthFailed, "authentication failed")
	}
	typ, frame, err := readFirst(hctx, c)
	if err != nil {
		fail("no AUTH frame", "error", err)
		return
	}
	if typ != websocket.MessageText {
		fail("binary first frame")
		return
	}
	if len(frame) > MaxHandshakeFrame {
		fail("oversized first frame")
		return
	}
	tok, hello, err := ParseAuth(frame)
	if err != nil {
		fail("bad AUTH frame", "error", err)
		return
	}
	if routed && routeFor(tok) != rt {
		fail("token of another route")
		return
	}
	l := &live{}
	if !b.reserve(hctx, l) {
		b.refuse.warn("rpc: refused connection: too many sessions", "max", b.cfg.MaxSessions)
		c.Close(StatusBusy, "too many sessions")
		return
	}
	defer b.untrack(l)
	p, err := b.tokens.claim(tok)
	if err != nil {
		fail("token rejected", "error", err)
		return
	}
	if !b.bind(l, p.RunID) {
		fail("run revoked during the handshake", "run", p.RunID)
		return
	}
	granted, missing := negotiate(p, hello)
	if len(missing) > 0 {
		body, _ := json.Marshal(Denied{
			Reason:  fmt.Sprintf("this script needs %v, which SDK %s does not provide; update the SDK", missing, hello.SDK),
			Missing: missing, SDK: hello.SDK,
		})
		b.log.Warn("rpc: denied run: SDK lacks capabilities", "run", p.RunID, "missing", missing, "sdk", hello.SDK)
		c.Write(hctx, websocket.MessageText, append([]byte("DENY "), body...))
		c.Close(StatusDenied, "capability mismatch")
		return
	}
	// The list the script is told is what its session can reach: a
	// capability its header permits but registered for another audience
	// would read as undefined, so it is not granted.
	api := newHostAPI(p, granted, b.cfg.Registry)
	granted = api.names()
	body, _ := json.Marshal(Accepted{Protocol: ProtocolVersion, Granted: granted})
	if err := c.Write(hctx, websocket.MessageText, append([]byte("OK "), body...)); err != nil {
		fail("writing OK", "error", err)
		return
	}
	b.removePending(pc)

	c.SetReadLimit(b.cfg.ReadLimit)
	// Counted before the session serves: its first calls may be answered
	// before NewSession returns.
	b.started.Add(1)
	sess, err := capnweb.NewSession(ws, api, &capnweb.Options{
		MaxMessageSize: int(b.cfg.ReadLimit), MaxInFlight: b.cfg.MaxInFlight,
		MaxMemory: b.cfg.MaxMemory, CallContext: b.cfg.CallContext, AbortReason: abortReason,
		PeerMaxMessageSize: capnweb.DefaultMaxMessageSize, OversizeReply: oversizeReply,
		OnPanic: func(v any, stack []byte) {
			b.log.Error("rpc: a session ended on a panic handling the script's message", "run", p.RunID, "panic", v, "stack", string(stack))
		},
	})
	if err != nil {
		b.started.Add(-1)
		fail("starting session", "error", err)
		return
	}
	if !b.start(l, sess, granted) {
		sess.Abort(ErrRevoked)
	} else if b.cfg.OnSession != nil {
		b.cfg.OnSession(p, sess)
	}
	select {
	case <-sess.Done():
	case <-b.ctx.Done():
		sess.Abort(ErrClosed)
	}
	sess.Close()
	if err := sess.Err(); err != nil && !errors.Is(err, capnweb.ErrClosed) {
		b.log.Info("rpc: session ended", "run", p.RunID, "error", err)
	}
}

// readFirst reads the first frame, at most MaxHandshakeFrame+1 bytes of
// it: enough to tell an oversized frame from a valid one without letting
// the library answer "message too big", which would say which check failed.
func readFirst(ctx context.Context, c *websocket.Conn) (websocket.MessageType, []byte, error) {
	c.SetReadLimit(-1)
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	frame, err := io.ReadAll(io.LimitReader(r, MaxHandshakeFrame+1))
	return typ, frame, err
}

// reserve takes a session slot before the token is claimed, so that a
// busy refusal does not burn the token and Revoke sees the run from the
// moment it is claimed. When every slot is taken it waits until ctx ends
// for one to free: a run that starts as another ends must not fail while
// the ended session winds down.
func (b *Bridge) reserve(ctx context.Context, l *live) bool {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return false
		}
		if len(b.sessions) < b.cfg.MaxSessions {
			b.sessions[l] = struct{}{}
			b.mu.Unlock()
			return true
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}

// bind names the run a reserved slot serves; it reports false when the run
// was revoked while its token was being claimed.
func (b *Bridge) bind(l *live, runID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l.runID = runID
	_, gone := b.revoked[runID]
	return !gone
}

// start attaches the running session; it reports false when the run was
// revoked or the bridge closed before the session existed.
func (b *Bridge) start(l *live, s *capnweb.Session, granted []permissions.Capability) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l.sess, l.granted = s, granted
	return !l.doomed && !b.closed
}

func (b *Bridge) untrack(l *live) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sessions, l)
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
}

// Each kind of refused connection is logged at most refusalBurst times
// per refusalWindow; the rest are counted and summed up in one line.
const (
	refusalWindow = time.Minute
	refusalBurst  = 5
)

// refusalLog keeps refused connections from growing the log without
// bound, since any local process can open them. Kinds are the messages,
// which are fixed strings (details go in the attributes), so there are
// few. It starts no goroutine: a window's summary is written by the first
// refusal after it, or by Close.
type refusalLog struct {
	log *slog.Logger

	mu      sync.Mutex
	start   time.Time      // of the current window
	logged  map[string]int // refusals logged in full in it, by message
	dropped map[string]int // refusals counted instead, by message
}

func (r *refusalLog) warn(msg string, args ...any) {
	r.mu.Lock()
	if now := time.Now(); now.Sub(r.start) >= refusalWindow {
		r.flushLocked()
		r.start = now
		clear(r.logged)
	}
	if r.logged == nil {
		r.logged, r.dropped = map[string]int{}, map[string]int{}
	}
	if r.logged[msg] < refusalBurst {
		r.logged[msg]++
		r.mu.Unlock()
		r.log.Warn(msg, args...)
		return
	}
	r.dropped[msg]++
	r.mu.Unlock()
}

// flush writes the summary of the current window, if it counted any.
func (r *refusalLog) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked()
}

func (r *refusalLog) flushLocked() {
	total := 0
	for _, n := range r.dropped {
		total += n
	}
	if total == 0 {
		return
	}
	reasons := make([]any, 0, 2*len(r.dropped))
	for _, why := range slices.Sorted(maps.Keys(r.dropped)) {
		reasons = append(reasons, why, r.dropped[why])
	}
	r.log.Warn("rpc: refused more connections than were logged", "count", total, "since", r.start.UTC().Format(time.RFC3339),
		slog.Group("reasons", reasons...))
	clear(r.dropped)
}

// addPending registers a connection in its handshake. Connections compete
// only with their own kind: the shared path with the shared path (up to
// MaxPending), a run's route with that route (up to MaxPendingPerRun).
// When its kind is full, the oldest of that kind is dropped.
func (b *Bridge) addPending(pc *pendingConn) *pendingConn {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, limit := b.pending, b.cfg.MaxPending
	if pc.routed {
		q, limit = b.routes[pc.route], b.cfg.MaxPendingPerRun
	}
	if len(q) >= limit {
		q[0].cancel()
		q = q[1:]
	}
	b.setQueue(pc, append(q, pc))
	return pc
}

func (b *Bridge) removePending(pc *pendingConn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.pending
	if pc.routed {
		q = b.routes[pc.route]
	}
	if i := slices.Index(q, pc); i >= 0 {
		b.setQueue(pc, slices.Delete(q, i, i+1))
	}
}

// setQueue stores the queue pc belongs to; a route's empty queue goes, so
// the map holds only routes with a handshake under way.
func (b *Bridge) setQueue(pc *pendingConn, q []*pendingConn) {
	switch {
	case !pc.routed:
		b.pending = q
	case len(q) == 0:
		delete(b.routes, pc.route)
	default:
		b.routes[pc.route] = q
	}
}
