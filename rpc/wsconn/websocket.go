package wsconn

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

	"github.com/tranquil/automation/rpc/capnweb"
)

// StatusAbort is the WebSocket close code the JavaScript implementation
// uses when a session aborts.
const StatusAbort websocket.StatusCode = 3000

// maxCloseReason is the most a close frame's reason may hold.
const maxCloseReason = 123

// Transport is a [capnweb.Transport] over one github.com/coder/websocket
// connection, sending each message as one text frame, as the JavaScript
// implementation does.
//
// It implements [capnweb.IOBinder], and [capnweb.Batcher] and
// [capnweb.NoWaitSender] too, which take effect when the connection under
// the WebSocket is known and tuned (see [Accept] and [Dial]); otherwise
// they do nothing and the session writes the ordinary way.
type Transport struct {
	c  *websocket.Conn
	nc *tunedConn // the underlying connection when it is known and tuned

	// bound is the context a session tied the connection to (see BindIO):
	// I/O under it needs no per-call cancellation of its own.
	bound context.Context
	rbuf  []byte // Recv's buffer, reused from message to message
}

var (
	_ capnweb.Transport    = (*Transport)(nil)
	_ capnweb.IOBinder     = (*Transport)(nil)
	_ capnweb.NoWaitSender = (*Transport)(nil)
)

// maxKeptReadBuffer bounds the receive buffer kept between messages, so
// that one large message does not pin its memory for the session's life.
const maxKeptReadBuffer = 1 << 20

// New wraps an established connection (accepted or dialed; the caller
// may have exchanged its own frames on it first). readLimit is the largest
// frame accepted, in bytes; zero or less means
// capnweb.DefaultMaxMessageSize. A larger frame ends the session with a
// limit error.
//
// Prefer [Accept] on a server: it also finds the connection under the
// WebSocket, which lets the session batch its writes.
func New(c *websocket.Conn, readLimit int64) *Transport {
	if readLimit <= 0 {
		readLimit = capnweb.DefaultMaxMessageSize
	}
	c.SetReadLimit(readLimit)
	return &Transport{c: c}
}

// Accept accepts a WebSocket upgrade (like websocket.Accept with opts,
// which may be nil) and returns it as a transport with the given read
// limit. Serve HTTP on a [QuickAckListener] so that the connection carries
// the TCP_QUICKACK fix and batched writes. The caller may still exchange
// frames of its own on [Transport.Conn] (an authentication handshake, say)
// before it starts a session with capnweb.NewSession.
func Accept(w http.ResponseWriter, r *http.Request, opts *websocket.AcceptOptions, readLimit int64) (*Transport, error) {
	rec := &hijackRecorder{ResponseWriter: w}
	c, err := websocket.Accept(rec, r, opts)
	if err != nil {
		return nil, err
	}
	t := New(c, readLimit)
	t.nc, _ = rec.conn.(*tunedConn)
	if t.nc != nil {
		t.nc.startFrames() // the upgrade response is out: frames follow
	}
	return t, nil
}

// hijackRecorder remembers the connection websocket.Accept hijacks.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("wsconn: the ResponseWriter cannot be hijacked")
	}
	c, brw, err := hj.Hijack()
	h.conn = c
	return c, brw, err
}

func (h *hijackRecorder) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// Dial connects to a Cap'n Web server at url (ws://…) and returns the
// transport. readLimit is as for [New]. On Linux the TCP connection
// re-arms TCP_QUICKACK after every read (see [QuickAckConn]).
func Dial(ctx context.Context, url string, readLimit int64) (*Transport, error) {
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
		return nil, fmt.Errorf("wsconn: dial %s: %w", url, err)
	}
	t := New(c, readLimit)
	t.nc = tc
	return t, nil
}

// Conn returns the underlying connection.
func (w *Transport) Conn() *websocket.Conn { return w.c }

// BindIO implements [capnweb.IOBinder]: it closes the connection once ctx
// ends. coder/websocket does the same for the context of each Read and
// Write, at the price of registering and removing a callback per frame; a
// session binds its I/O context once and that cost goes away.
func (w *Transport) BindIO(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	w.bound = ctx
	context.AfterFunc(ctx, func() { w.c.CloseNow() })
}

// opContext is the context to hand coder/websocket for ctx.
func (w *Transport) opContext(ctx context.Context) context.Context {
	if ctx == w.bound {
		return context.Background()
	}
	return ctx
}

// BeginBatch implements [capnweb.Batcher]: the frames sent until EndBatch
// leave with one system call when the connection allows it.
func (w *Transport) BeginBatch() {
	if w.nc != nil {
		w.nc.cork()
	}
}

// EndBatch implements [capnweb.Batcher]: it writes what the batch held,
// and what SendNoWait left.
func (w *Transport) EndBatch() error {
	if w.nc != nil {
		return w.nc.uncork()
	}
	return nil
}

// SendNoWait implements [capnweb.NoWaitSender] on a tuned connection: it
// writes what the socket takes at once and keeps the rest for EndBatch or
// the next Send. Elsewhere it reports sent=false.
func (w *Transport) SendNoWait(ctx context.Context, msgs [][]byte) (sent, flushed bool, err error) {
	if w.nc == nil {
		return false, false, nil
	}
	size := 0
	for _, m := range msgs {
		size += len(m) + 14 // the largest header a frame of ours needs
	}
	if !w.nc.room(size) {
		return false, false, nil
	}
	w.nc.cork()
	for _, m := range msgs {
		if err := w.Send(ctx, m); err != nil {
			w.nc.uncorkNoWait()
			return true, false, err
		}
	}
	flushed, err = w.nc.uncorkNoWait()
	return true, flushed, err
}

// Send implements [capnweb.Transport].
func (w *Transport) Send(ctx context.Context, msg []byte) error {
	return w.c.Write(w.opContext(ctx), websocket.MessageText, msg)
}

// Recv implements [capnweb.Transport]. The message is valid until the
// next Recv. A close by the peer is reported as a *capnweb.CloseError, a
// frame over the read limit as an error wrapping capnweb.ErrLimit, and a
// binary frame as one wrapping capnweb.ErrProtocol.
func (w *Transport) Recv(ctx context.Context) ([]byte, error) {
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
			return nil, &capnweb.CloseError{Code: int(ce.Code), Reason: ce.Reason}
		case errors.Is(err, websocket.ErrMessageTooBig):
			return nil, fmt.Errorf("%w: frame exceeds the read limit: %w", capnweb.ErrLimit, err)
		}
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("%w: binary frame (%d bytes); Cap'n Web uses text frames", capnweb.ErrProtocol, len(w.rbuf))
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

// Close implements [capnweb.Transport]: a normal closure, or code 3000
// with the abort reason truncated to fit a close frame. After an abort a
// tuned connection lingers before it closes (see [TuneOptions.Linger]):
// a peer still writing then reads the abort, not "connection reset".
func (w *Transport) Close(reason error) error {
	if reason == nil {
		return w.c.Close(websocket.StatusNormalClosure, "")
	}
	if w.nc != nil {
		w.nc.lingerOnClose()
	}
	return w.c.Close(StatusAbort, truncateUTF8(capnweb.WireMessage(reason), maxCloseReason))
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
