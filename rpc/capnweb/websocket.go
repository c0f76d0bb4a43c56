package capnweb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// StatusAbort is the WebSocket close code the JavaScript implementation
// uses when a session aborts.
const StatusAbort websocket.StatusCode = 3000

// maxCloseReason is the most a close frame's reason may hold.
const maxCloseReason = 123

// WebSocket is a [Transport] over one github.com/coder/websocket
// connection, sending each message as one text frame, as the JavaScript
// implementation does.
type WebSocket struct {
	c  *websocket.Conn
	nc *tunedConn // the underlying connection when it is known and tuned

	// bound is the context a session tied the connection to (see bindIO):
	// I/O under it needs no per-call cancellation of its own.
	bound context.Context
	rbuf  []byte // Recv's buffer, reused from message to message
}

// maxKeptReadBuffer bounds the receive buffer kept between messages, so
// that one large message does not pin its memory for the session's life.
const maxKeptReadBuffer = 1 << 20

// NewWebSocket wraps an established connection (accepted or dialed; the
// caller may have exchanged its own frames on it first). readLimit is the
// largest frame accepted, in bytes; zero or less means
// DefaultMaxMessageSize. A larger frame ends the session with a limit
// error.
//
// Prefer [AcceptWebSocket] on a server: it also finds the connection
// under the WebSocket, which lets the session batch its writes.
func NewWebSocket(c *websocket.Conn, readLimit int64) *WebSocket {
	if readLimit <= 0 {
		readLimit = DefaultMaxMessageSize
	}
	c.SetReadLimit(readLimit)
	return &WebSocket{c: c}
}

// AcceptWebSocket accepts a WebSocket upgrade (like websocket.Accept with
// opts, which may be nil) and returns it as a transport with the given read
// limit. Serve HTTP on a [QuickAckListener] so that the connection carries
// the TCP_QUICKACK fix and batched writes. The caller may still exchange
// frames of its own on [WebSocket.Conn] (an authentication handshake, say)
// before it starts a session with [NewSession].
func AcceptWebSocket(w http.ResponseWriter, r *http.Request, opts *websocket.AcceptOptions, readLimit int64) (*WebSocket, error) {
	rec := &hijackRecorder{ResponseWriter: w}
	c, err := websocket.Accept(rec, r, opts)
	if err != nil {
		return nil, err
	}
	ws := NewWebSocket(c, readLimit)
	ws.nc, _ = rec.conn.(*tunedConn)
	return ws, nil
}

// hijackRecorder remembers the connection websocket.Accept hijacks.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("capnweb: the ResponseWriter cannot be hijacked")
	}
	c, brw, err := hj.Hijack()
	h.conn = c
	return c, brw, err
}

func (h *hijackRecorder) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// beginBatch and endBatch let the session write several frames with one
// system call when the connection allows it.
func (w *WebSocket) beginBatch() {
	if w.nc != nil {
		w.nc.cork()
	}
}

func (w *WebSocket) endBatch() error {
	if w.nc != nil {
		return w.nc.uncork()
	}
	return nil
}

// bindIO closes the connection once ctx ends. coder/websocket does the
// same for the context of each Read and Write, at the price of registering
// and removing a callback per frame; a session binds its I/O context once
// and that cost goes away.
func (w *WebSocket) bindIO(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	w.bound = ctx
	context.AfterFunc(ctx, func() { w.c.CloseNow() })
}

// opContext is the context to hand coder/websocket for ctx.
func (w *WebSocket) opContext(ctx context.Context) context.Context {
	if ctx == w.bound {
		return context.Background()
	}
	return ctx
}

// sendNoWait sends frames without waiting for room in the socket's
// buffer. It reports sent=false, having sent nothing, when it cannot do so
// (the caller then sends them the ordinary way). With sent=true the frames
// are on their way; flushed reports whether they all reached the socket,
// and when they did not, endBatch (or the next Send) writes the rest.
func (w *WebSocket) sendNoWait(ctx context.Context, frames [][]byte) (sent, flushed bool, err error) {
	if w.nc == nil {
		return false, false, nil
	}
	size := 0
	for _, f := range frames {
		size += len(f) + 14 // the largest header a frame of ours needs
	}
	if !w.nc.room(size) {
		return false, false, nil
	}
	w.nc.cork()
	for _, f := range frames {
		if err := w.Send(ctx, f); err != nil {
			w.nc.uncorkNoWait()
			return true, false, err
		}
	}
	flushed, err = w.nc.uncorkNoWait()
	return true, flushed, err
}

// Conn returns the underlying connection.
func (w *WebSocket) Conn() *websocket.Conn { return w.c }

// Send implements [Transport].
func (w *WebSocket) Send(ctx context.Context, msg []byte) error {
	return w.c.Write(w.opContext(ctx), websocket.MessageText, msg)
}

// Recv implements [Transport]. The message is valid until the next Recv.
func (w *WebSocket) Recv(ctx context.Context) ([]byte, error) {
	typ, r, err := w.c.Reader(w.opContext(ctx))
	if err == nil {
		if cap(w.rbuf) > maxKeptReadBuffer {
			w.rbuf = nil
		}
		w.rbuf, err = readAllInto(w.rbuf[:0], r)
	}
	if err != nil {
		var ce websocket.CloseError
		switch {
		case errors.As(err, &ce):
			return nil, &CloseError{Code: int(ce.Code), Reason: ce.Reason}
		case errors.Is(err, websocket.ErrMessageTooBig):
			return nil, limitErrorf("frame exceeds the read limit: %v", err)
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, protoErrorf("binary frame (%d bytes); Cap'n Web uses text frames", len(w.rbuf))
	}
	return w.rbuf, nil
}

// readAllInto is io.ReadAll appending to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	if cap(b) == 0 {
		b = make([]byte, 0, 4096)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// Close implements [Transport]: a normal closure, or code 3000 with the
// abort reason truncated to fit a close frame.
func (w *WebSocket) Close(reason error) error {
	if reason == nil {
		return w.c.Close(websocket.StatusNormalClosure, "")
	}
	return w.c.Close(StatusAbort, truncateUTF8(wireMessage(reason), maxCloseReason))
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// DialWebSocket connects to a Cap'n Web server at url (ws://…) and returns
// the transport. readLimit is as for [NewWebSocket]. On Linux the TCP
// connection re-arms TCP_QUICKACK after every read (see [QuickAckConn]).
func DialWebSocket(ctx context.Context, url string, readLimit int64) (*WebSocket, error) {
	d := &net.Dialer{}
	var tc *tunedConn
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc = QuickAckConn(c).(*tunedConn)
			return tc, nil
		},
	}}
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		return nil, fmt.Errorf("capnweb: dial %s: %w", url, err)
	}
	ws := NewWebSocket(c, readLimit)
	ws.nc = tc
	return ws, nil
}
