package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/mafredri/cdp/rpcc"
)

// mux carries every session of one browser over one WebSocket using
// flattened sessions: each frame names its session in a top-level
// "sessionId". One reader goroutine routes incoming frames by that id; all
// writers share one lock. Each session gets its own rpcc.Conn (built on
// rpcc's dialer and codec hooks), so the generated protocol clients work
// unchanged for every session.
//
// The reader goroutine is owned by the mux and stops when the socket fails
// or close is called; stopping ends every route with ErrBrowserClosed.
type mux struct {
	ws      *websocket.Conn
	maxSize int64

	ctx    context.Context // ends when the socket is gone
	cancel context.CancelFunc

	wmu sync.Mutex // one writer at a time on the socket

	mu     sync.Mutex
	routes map[string]*route
	err    error // why the reader stopped; set before ctx is cancelled

	readerDone chan struct{}

	// Direct calls skip rpcc for the hottest path (callFunctionOn): the
	// reader hands their replies straight to the caller. Their ids live in
	// [2^30, 2^31), which rpcc's per-session counters (from 1) would need
	// a billion calls on one session to reach; Chromium takes only int32
	// ids.
	directSeq atomic.Uint64
	pmu       sync.Mutex
	pending   map[uint64]chan []byte
}

// directIDBase starts the id range of direct calls.
const directIDBase = 1 << 30

// route is one session's inbound queue.
type route struct {
	id   string
	in   chan []byte
	gone chan struct{} // closed when the session ends
	once sync.Once
	err  error // why; set before gone is closed

	mu     sync.Mutex
	reason string // Inspector.detached reason, if one arrived

	// observe, when set, sees each event of the session before rpcc does,
	// on the session's receive goroutine. It must not block or call the
	// browser.
	observe func(method string, params json.RawMessage)
}

func (r *route) end(err error) {
	r.once.Do(func() {
		r.err = err
		close(r.gone)
	})
}

func dialMux(ctx context.Context, url string, maxSize int64) (*mux, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %w", ErrEndpoint, url, err)
	}
	ws.SetReadLimit(maxSize)
	m := &mux{ws: ws, maxSize: maxSize, routes: map[string]*route{}, readerDone: make(chan struct{}), pending: map[uint64]chan []byte{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	go m.read()
	return m, nil
}

func (m *mux) read() {
	defer close(m.readerDone)
	var err error
	for {
		var data []byte
		_, data, err = m.ws.Read(m.ctx)
		if err != nil {
			break
		}
		if id, ok := directID(data); ok {
			m.pmu.Lock()
			ch := m.pending[id]
			delete(m.pending, id)
			m.pmu.Unlock()
			if ch != nil {
				ch <- data // buffered; one reply per call
			}
			continue
		}
		id, ok := sessionIDOf(data)
		if !ok {
			continue // not a protocol frame; nothing can be waiting for it
		}
		m.mu.Lock()
		r := m.routes[id]
		m.mu.Unlock()
		if r == nil {
			continue // a session nobody attached here, or already gone
		}
		if id != "" && bytes.HasPrefix(data, []byte(`{"method":"Inspector.`)) {
			// Read here, in arrival order, so the browser-level
			// Target.detachedFromTarget that follows can name the reason.
			m.inspectorEvent(r, data)
		}
		select {
		case r.in <- data:
		case <-r.gone:
		case <-m.ctx.Done():
		}
	}
	m.shutdown(err)
}

// inspectorEvent records why a session is about to end. A crash ends the
// route at once: the browser may keep the session open, but nothing sent to
// it will be answered.
func (m *mux) inspectorEvent(r *route, data []byte) {
	var ev struct {
		Method string `json:"method"`
		Params struct {
			Reason string `json:"reason"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Method {
	case "Inspector.detached":
		r.mu.Lock()
		r.reason = ev.Params.Reason
		r.mu.Unlock()
	case "Inspector.targetCrashed":
		m.drop(r, &DetachedError{Reason: ErrTargetCrashed})
	}
}

// detached handles the browser's Target.detachedFromTarget for a session.
func (m *mux) detached(sessionID, targetID string) {
	m.mu.Lock()
	r := m.routes[sessionID]
	m.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	reason := r.reason
	r.mu.Unlock()
	err := &DetachedError{TargetID: targetID, Reason: ErrDetached, Detail: reason}
	switch reason {
	case "target_closed", "Render process gone.":
		// A closed tab's renderer exits too; a real crash was already
		// reported by Inspector.targetCrashed and ended the route.
		err.Reason, err.Detail = ErrTargetClosed, ""
	}
	m.drop(r, err)
}

// shutdown ends every route; the first cause wins.
func (m *mux) shutdown(cause error) {
	m.mu.Lock()
	if m.err == nil {
		m.err = fmt.Errorf("%w: %v", ErrBrowserClosed, cause)
		if cause == nil {
			m.err = ErrBrowserClosed
		}
	}
	routes := m.routes
	m.routes = map[string]*route{}
	err := m.err
	m.mu.Unlock()
	for _, r := range routes {
		r.end(&DetachedError{Reason: ErrBrowserClosed, Detail: detailOf(err)})
	}
	m.cancel()
}

func detailOf(err error) string {
	if err == nil || err == ErrBrowserClosed {
		return ""
	}
	return err.Error()
}

// close shuts the socket and waits for the reader.
func (m *mux) close() {
	m.shutdown(errors.New("closed by client"))
	_ = m.ws.CloseNow()
	<-m.readerDone
}

// sessionIDOf finds the top-level "sessionId" of a frame. Chromium writes
// it last, so a look at the tail is usually enough; anything else gets a
// full decode. The tail match is sound: inside a JSON string the quotes
// around the key would be escaped, and the final '}' right after the value
// closes the top-level object.
func sessionIDOf(data []byte) (string, bool) {
	const key = `,"sessionId":"`
	n := len(data)
	if n > 2 && data[n-1] == '}' && data[n-2] == '"' {
		tail := data[max(0, n-128) : n-2]
		if i := bytes.LastIndex(tail, []byte(key)); i >= 0 {
			if id := tail[i+len(key):]; plainID(id) {
				return string(id), true
			}
		}
	}
	var probe struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return "", false
	}
	return probe.SessionID, true
}

// directID reads the leading "id" of a reply, which Chromium writes first,
// and reports whether it belongs to a direct call.
func directID(data []byte) (uint64, bool) {
	const prefix = `{"id":`
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return 0, false
	}
	var id uint64
	i := len(prefix)
	for ; i < len(data) && data[i] >= '0' && data[i] <= '9' && i < len(prefix)+20; i++ {
		id = id*10 + uint64(data[i]-'0')
	}
	if i == len(prefix) || i >= len(data) || data[i] != ',' && data[i] != '}' {
		return 0, false
	}
	return id, id >= directIDBase
}

// invoke sends one request on r's session and returns the raw reply
// frame, bypassing rpcc. The caller decodes it.
func (m *mux) invoke(ctx context.Context, r *route, method string, params []byte) ([]byte, error) {
	select {
	case <-r.gone:
		return nil, r.err
	default:
	}
	id := directIDBase + m.directSeq.Add(1)%directIDBase
	ch := make(chan []byte, 1)
	m.pmu.Lock()
	m.pending[id] = ch
	m.pmu.Unlock()
	defer func() {
		m.pmu.Lock()
		delete(m.pending, id)
		m.pmu.Unlock()
	}()
	b := make([]byte, 0, len(params)+len(method)+96)
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"sessionId":"`...)
	b = append(b, r.id...)
	b = append(b, `","method":`...)
	b = strconv.AppendQuote(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	b = append(b, '}')
	if err := m.write(b); err != nil {
		return nil, err
	}
	select {
	case data := <-ch:
		return data, nil
	case <-r.gone:
		return nil, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// plainID reports whether b is the kind of id Chromium issues (hex, or at
// least plain ASCII word characters), which needs no JSON unescaping.
func plainID(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return len(b) > 0
}

// open registers a session route and returns an rpcc.Conn speaking on it.
// observe may be nil.
func (m *mux) open(ctx context.Context, sessionID string, observe func(string, json.RawMessage)) (*rpcc.Conn, *route, error) {
	r := &route{id: sessionID, in: make(chan []byte, 64), gone: make(chan struct{}), observe: observe}
	m.mu.Lock()
	if m.err != nil {
		err := m.err
		m.mu.Unlock()
		return nil, nil, err
	}
	if _, dup := m.routes[sessionID]; dup {
		m.mu.Unlock()
		return nil, nil, fmt.Errorf("cdp: session %q already open", sessionID)
	}
	m.routes[sessionID] = r
	m.mu.Unlock()

	sc := &sessionCodec{m: m, r: r}
	conn, err := rpcc.DialContext(ctx, sessionID,
		rpcc.WithDialer(func(context.Context, string) (io.ReadWriteCloser, error) { return sc, nil }),
		rpcc.WithCodec(func(io.ReadWriter) rpcc.Codec { return sc }),
	)
	if err != nil {
		m.drop(r, ErrDetached)
		return nil, nil, err
	}
	return conn, r, nil
}

// drop removes a route and ends it.
func (m *mux) drop(r *route, err error) {
	m.mu.Lock()
	if m.routes[r.id] == r {
		delete(m.routes, r.id)
	}
	m.mu.Unlock()
	r.end(err)
}

func (m *mux) write(b []byte) error {
	if int64(len(b)) > m.maxSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooLarge, len(b), m.maxSize)
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err := m.ws.Write(m.ctx, websocket.MessageText, b); err != nil {
		m.mu.Lock()
		merr := m.err
		m.mu.Unlock()
		if merr != nil {
			return merr
		}
		return fmt.Errorf("cdp: write: %w", err)
	}
	return nil
}

// sessionCodec is both the "network connection" and the codec rpcc sees
// for one session: requests gain the session id and go to the shared
// socket; responses come from the route's queue.
type sessionCodec struct {
	m   *mux
	r   *route
	buf []byte // guarded by rpcc, which serialises WriteRequest
}

func (c *sessionCodec) WriteRequest(req *rpcc.Request) error {
	select {
	case <-c.r.gone:
		return c.r.err
	default:
	}
	b := c.buf[:0]
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, req.ID, 10)
	if c.r.id != "" {
		b = append(b, `,"sessionId":"`...)
		b = append(b, c.r.id...)
		b = append(b, '"')
	}
	b = append(b, `,"method":`...)
	b = strconv.AppendQuote(b, req.Method)
	if req.Args != nil {
		params, err := json.Marshal(req.Args)
		if err != nil {
			return fmt.Errorf("cdp: encode %s: %w", req.Method, err)
		}
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	b = append(b, '}')
	if cap(b) <= 64<<10 {
		c.buf = b // keep small buffers; let big ones go
	}
	return c.m.write(b)
}

func (c *sessionCodec) ReadResponse(resp *rpcc.Response) error {
	select {
	case data := <-c.r.in:
		if err := json.Unmarshal(data, resp); err != nil {
			return fmt.Errorf("cdp: decode frame: %w", err)
		}
		if resp.Method != "" && c.r.observe != nil {
			c.r.observe(resp.Method, resp.Args)
		}
		return nil
	case <-c.r.gone:
		return c.r.err
	}
}

func (c *sessionCodec) Read([]byte) (int, error) {
	return 0, errors.New("cdp: session codec has no byte stream")
}
func (c *sessionCodec) Write([]byte) (int, error) {
	return 0, errors.New("cdp: session codec has no byte stream")
}

// Close ends the route; rpcc calls it when the conn closes.
func (c *sessionCodec) Close() error {
	c.m.drop(c.r, &DetachedError{Reason: ErrDetached, Detail: "closed by client"})
	return nil
}
