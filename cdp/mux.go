package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/mafredri/cdp/rpcc"

	"github.com/tranquil/automation/cdp/internal/wire"
	"github.com/tranquil/automation/errcode"
)

// mux carries every session of one browser over one transport (a
// WebSocket or a pipe pair) using flattened sessions: each message names
// its session in a top-level "sessionId". One reader goroutine routes
// incoming messages by that id; all writers share one lock. Each session
// gets its own rpcc.Conn (built on rpcc's dialer and codec hooks), so the
// generated protocol clients work unchanged for every session.
//
// The reader goroutine is owned by the mux and stops when the transport
// fails or close is called; stopping ends every route with
// ErrBrowserClosed.
type mux struct {
	t       transport
	maxSize int64

	ctx    context.Context // ends when the transport is gone
	cancel context.CancelFunc

	wmu sync.Mutex // one writer at a time on the transport

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
	pending   map[uint64]directCall
}

// directCall is a direct call waiting for its reply. limit, when above
// zero, is the most its reply may be: what the caller's meter has left.
// A longer reply is read past and dropped, as one over the connection's
// limit is, so that it is never built.
type directCall struct {
	ch    chan directReply
	limit int64
}

// directReply is the answer to a direct call: the raw reply, or why there
// is none to read.
type directReply struct {
	data []byte
	err  error
}

// transport carries whole protocol messages between the mux and the
// browser. The mux reads from one goroutine and writes under its own lock,
// so neither method is called concurrently with itself.
type transport interface {
	// readMessage returns the next message. A message over the size limit
	// is consumed whole and reported as an *oversizeError, after which
	// reading goes on; any other error is final. The limit is the
	// connection's, or what limitOf answers for the message's first bytes
	// when they are read and the message is longer than them: the reply to
	// a call may be held to what its caller can take.
	readMessage(ctx context.Context, limitOf func(head []byte) int64) ([]byte, error)
	// writeMessage sends one message; b is the caller's again on return.
	writeMessage(ctx context.Context, b []byte) error
	// close ends the transport and unblocks readMessage and writeMessage.
	// It is safe to call more than once.
	close() error
}

// oversizeError is a message the transport read past and dropped because
// it was over the size limit (see wire.Dropped for what is kept of it).
type oversizeError struct {
	wire.Dropped
	// metered: the limit was the caller's meter's, not the connection's.
	metered bool
}

func (e *oversizeError) Error() string {
	if e.metered {
		return fmt.Sprintf("the browser's reply (over %s) is larger than what is left of the memory budget (%s)", byteCount(e.Size), byteCount(e.Limit))
	}
	return fmt.Sprintf("cdp: message too large: %d bytes, limit %d", e.Size, e.Limit)
}

func (e *oversizeError) Unwrap() error {
	if e.metered {
		return ErrOverBudget
	}
	return ErrMessageTooLarge
}

// byteCount words n bytes for a person.
func byteCount(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// wsTransport is a browser WebSocket. It enforces the size limit itself,
// rather than through the socket's read limit, so that an oversized
// message costs one call instead of the connection.
type wsTransport struct {
	ws  *websocket.Conn
	max int64
}

func (t *wsTransport) readMessage(ctx context.Context, limitOf func([]byte) int64) ([]byte, error) {
	_, r, err := t.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	var head [wire.HeadLen]byte
	n, err := io.ReadFull(r, head[:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return append([]byte(nil), head[:n]...), nil
	}
	if err != nil {
		return nil, err
	}
	limit := t.max
	if l := limitOf(head[:]); l > 0 && l < limit {
		limit = l
	}
	b, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head[:]), r), limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) <= limit {
		return b, nil
	}
	o := &oversizeError{Dropped: wire.Dropped{Limit: limit}, metered: limit < t.max}
	o.Write(b)
	if _, err := io.Copy(o, r); err != nil {
		return nil, err
	}
	return nil, o
}

func (t *wsTransport) writeMessage(ctx context.Context, b []byte) error {
	return t.ws.Write(ctx, websocket.MessageText, b)
}

func (t *wsTransport) close() error { return t.ws.CloseNow() }

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
	ws.SetReadLimit(-1) // wsTransport applies maxSize
	return newMux(&wsTransport{ws: ws, max: maxSize}, maxSize), nil
}

// newMux starts the reader on t; the mux owns t from then on.
func newMux(t transport, maxSize int64) *mux {
	m := &mux{t: t, maxSize: maxSize, routes: map[string]*route{}, readerDone: make(chan struct{}), pending: map[uint64]directCall{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	go m.read()
	return m
}

func (m *mux) read() {
	defer close(m.readerDone)
	var err error
	for {
		var data []byte
		data, err = m.t.readMessage(m.ctx, m.limitOf)
		if err != nil {
			var o *oversizeError
			if errors.As(err, &o) {
				m.oversized(o)
				continue
			}
			break
		}
		if id, ok := directID(data); ok {
			m.answer(id, directReply{data: data})
			continue
		}
		id, ok := wire.SessionIDOf(data)
		if !ok {
			continue // not a protocol frame; nothing can be waiting for it
		}
		m.deliver(id, data)
	}
	m.shutdown(err)
}

// answer hands a direct call its reply.
func (m *mux) answer(id uint64, rep directReply) {
	m.pmu.Lock()
	c, ok := m.pending[id]
	delete(m.pending, id)
	m.pmu.Unlock()
	if ok {
		c.ch <- rep // buffered; one reply per call
	}
}

// maxPageTextEvent bounds an event that carries what a page wrote to its
// console, threw, or put in a dialog (a prompt's default text, which
// Chromium does not cut as it cuts a message): the page chooses its size
// (up to maxSize, 256 MiB), and one read whole costs the host that much
// several times over while the trace keeps a few KiB of it. A larger one
// reaches its session as a short stand-in (see pageTextStandIn).
const maxPageTextEvent = 1 << 20

// limitOf is the most the message starting with head may be: the limit of
// the direct call it answers, when that call has one, and
// maxPageTextEvent for an event of a page's console, exceptions or dialogs.
func (m *mux) limitOf(head []byte) int64 {
	if method, ok := wire.LeadingMethod(head); ok {
		if pageTextEvents[string(method)] {
			return maxPageTextEvent
		}
		return 0
	}
	id, ok := wire.LeadingID(head)
	if !ok || id < directIDBase {
		return 0
	}
	m.pmu.Lock()
	c := m.pending[id]
	m.pmu.Unlock()
	return c.limit
}

// deliver queues a message on its session's route.
func (m *mux) deliver(sessionID string, data []byte) {
	m.mu.Lock()
	r := m.routes[sessionID]
	m.mu.Unlock()
	if r == nil {
		return // a session nobody attached here, or already gone
	}
	if sessionID != "" && bytes.HasPrefix(data, []byte(`{"method":"Inspector.`)) {
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

// oversized fails the call a dropped message answered, so that it returns
// at once rather than wait for a reply that will never come. A direct call
// gets the *oversizeError; an rpcc call gets a protocol error naming it,
// since rpcc has no way to carry another error to one call. A dropped
// event of pageTextEvents reaches its session as a stand-in; any other is
// simply lost.
func (m *mux) oversized(o *oversizeError) {
	if method, ok := wire.LeadingMethod(o.Head); ok && pageTextEvents[string(method)] {
		if sessionID, ok := wire.TailSessionID(o.Tail); ok {
			m.deliver(sessionID, pageTextStandIn(string(method), o.Size, o.Tail))
		}
		return
	}
	id, ok := wire.LeadingID(o.Head)
	if !ok {
		return
	}
	if id >= directIDBase {
		m.answer(id, directReply{err: o})
		return
	}
	sessionID, _ := wire.TailSessionID(o.Tail) // none: a browser-level reply
	m.deliver(sessionID, wire.ErrorReply(id, o.Error()))
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

// close shuts the transport and waits for the reader.
func (m *mux) close() {
	m.shutdown(errors.New("closed by client"))
	_ = m.t.close()
	<-m.readerDone
}

// directID reads the leading "id" of a reply and reports whether it
// belongs to a direct call.
func directID(data []byte) (uint64, bool) {
	id, ok := wire.LeadingID(data)
	return id, ok && id >= directIDBase
}

// invoke sends one request on r's session and returns the raw reply
// frame, bypassing rpcc. The caller decodes it. A reply longer than limit
// (when above zero) is dropped as it is read and fails the call with an
// *oversizeError matching ErrOverBudget.
func (m *mux) invoke(ctx context.Context, r *route, method string, params []byte, limit int64) ([]byte, error) {
	select {
	case <-r.gone:
		return nil, r.err
	default:
	}
	id := directIDBase + m.directSeq.Add(1)%directIDBase
	ch := make(chan directReply, 1)
	m.pmu.Lock()
	m.pending[id] = directCall{ch: ch, limit: limit}
	m.pmu.Unlock()
	defer func() {
		m.pmu.Lock()
		delete(m.pending, id)
		m.pmu.Unlock()
	}()
	if err := m.write(request(id, r, method, params)); err != nil {
		return nil, err
	}
	select {
	case rep := <-ch:
		return rep.data, rep.err
	case <-r.gone:
		return nil, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send sends one request on r's session and does not wait for its reply,
// which answer drops: for a call whose outcome changes nothing for the
// caller, such as freeing objects.
func (m *mux) send(r *route, method string, params []byte) error {
	id := directIDBase + m.directSeq.Add(1)%directIDBase
	return m.write(request(id, r, method, params))
}

// request is the frame of a direct call.
func request(id uint64, r *route, method string, params []byte) []byte {
	return wire.AppendCall(make([]byte, 0, len(params)+len(method)+96), id, r.id, method, params)
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
		return codeErr(errcode.Error, "%w (%d bytes, the limit is %d)", ErrMessageTooLarge, len(b), m.maxSize)
	}
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err := m.t.writeMessage(m.ctx, b); err != nil {
		// A connection that takes no more (a dead browser's pipe: EPIPE,
		// often before the reader has seen its end) is gone, whichever
		// side notices first: every call ends as the browser's close.
		m.shutdown(fmt.Errorf("write: %w", err))
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.err
	}
	return nil
}

// sessionCodec is both the "network connection" and the codec rpcc sees
// for one session: requests gain the session id and go to the shared
// transport; responses come from the route's queue.
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
	var params []byte
	if req.Args != nil {
		var err error
		if params, err = json.Marshal(req.Args); err != nil {
			return fmt.Errorf("cdp: encode %s: %w", req.Method, err)
		}
	}
	b := wire.AppendCall(c.buf[:0], req.ID, c.r.id, req.Method, params)
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

// pageTextEvents are the events whose size a page chooses with what it
// writes to its console, throws, or shows in a dialog.
var pageTextEvents = map[string]bool{
	"Runtime.consoleAPICalled":     true,
	"Runtime.exceptionThrown":      true,
	"Page.javascriptDialogOpening": true,
}

// pageTextStandIn is the event a session gets in place of one of
// pageTextEvents too large to read (size bytes, tail its last bytes): the
// same method, saying how large the message was, so that a console or a
// trace shows one was there and a dialog is still answered.
func pageTextStandIn(method string, size int64, tail []byte) []byte {
	switch method {
	case "Runtime.exceptionThrown":
		what := fmt.Sprintf("(an exception of %d bytes, too large to read)", size)
		return []byte(`{"method":"Runtime.exceptionThrown","params":{"timestamp":0,"exceptionDetails":` +
			`{"exceptionId":0,"text":"Uncaught ` + what + `","lineNumber":0,"columnNumber":0}}}`)
	case "Page.javascriptDialogOpening":
		// The type follows the message; when the tail does not hold it,
		// what is large is a prompt's default text.
		typ := "prompt"
		if i := bytes.LastIndex(tail, []byte(`"type":"`)); i >= 0 {
			rest := tail[i+len(`"type":"`):]
			if end := bytes.IndexByte(rest, '"'); end > 0 && dialogTypes[string(rest[:end])] {
				typ = string(rest[:end])
			}
		}
		what := fmt.Sprintf("(a dialog of %d bytes, too large to read)", size)
		return []byte(`{"method":"Page.javascriptDialogOpening","params":{"url":"","frameId":"","message":"` + what +
			`","type":"` + typ + `","hasBrowserHandler":true,"defaultPrompt":""}}`)
	}
	what := fmt.Sprintf("(a console message of %d bytes, too large to read)", size)
	return []byte(`{"method":"Runtime.consoleAPICalled","params":{"type":"log","executionContextId":0,"timestamp":0,` +
		`"args":[{"type":"string","value":"` + what + `"}]}}`)
}

// dialogTypes are the types of page.DialogType.
var dialogTypes = map[string]bool{"alert": true, "confirm": true, "prompt": true, "beforeunload": true}
