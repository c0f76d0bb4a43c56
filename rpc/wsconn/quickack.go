package wsconn

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// QuickAckListener returns l with every accepted connection wrapped by
// [QuickAckConn]. Serve HTTP on it (http.Server.Serve) and accept the
// WebSocket with [Accept]: the hijacked connection is the wrapped
// one, so both of its tunings apply to the session that runs on it.
func QuickAckListener(l net.Listener) net.Listener {
	return TuneListener(l, nil)
}

// TuneOptions choose how [TuneListener] tunes connections. The zero
// value is what [QuickAckListener] does.
type TuneOptions struct {
	// NoQuickAck leaves TCP_QUICKACK off even on Linux: data with no
	// reply is then acknowledged by an unsolicited pong only, as on
	// systems without TCP_QUICKACK. Tests and benchmarks use it to stand
	// in for macOS and Windows.
	NoQuickAck bool
	// Linger bounds how long a connection whose session the server
	// aborted goes on reading, and discarding, what the peer still sends
	// before it is closed (see [Transport.Close]). Zero means
	// DefaultLinger; less than zero closes at once.
	Linger time.Duration
	// LingerBytes bounds what the connection reads while it lingers; past
	// it the connection is closed. Zero means DefaultLingerBytes.
	LingerBytes int64
}

// TuneListener is [QuickAckListener] with options; opts may be nil.
func TuneListener(l net.Listener, opts *TuneOptions) net.Listener {
	var o TuneOptions
	if opts != nil {
		o = *opts
	}
	return &quickAckListener{Listener: l, opts: o}
}

type quickAckListener struct {
	net.Listener
	opts TuneOptions
}

func (l *quickAckListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tune(c, l.opts), nil
}

// QuickAckConn returns c tuned for Cap'n Web:
//
//   - Data read and not yet acknowledged by a write of ours is
//     acknowledged at once before the next read waits. Deno's WebSocket
//     client leaves Nagle's algorithm on, and the JavaScript client sends
//     frames the server does not answer at once (release, or a push it has
//     not pulled yet). With the default delayed ACK the client's next
//     frame then waits about 40 ms (200 ms on Windows): every sequential
//     call stalls. On Linux the acknowledgement is a bare ACK
//     (TCP_QUICKACK); elsewhere, once [Accept] has made the connection a
//     WebSocket, it rides on an unsolicited empty pong. When a reply is
//     written first, the acknowledgement rides on it and nothing extra is
//     sent.
//   - A session on a WebSocket made by [Accept] or [Dial]
//     over such a connection writes the frames it has queued with one
//     system call, as the JavaScript implementation does.
func QuickAckConn(c net.Conn) net.Conn {
	return tune(c, TuneOptions{})
}

func tune(c net.Conn, opts TuneOptions) net.Conn {
	if _, ok := c.(*tunedConn); ok {
		return c
	}
	t := &tunedConn{Conn: c, linger: opts.lingerBounds()}
	t.raw = newRawSocket(c)
	t.quickAck = !opts.NoQuickAck && t.raw.armQuickAck()
	return t
}

// tunedConn is the connection QuickAckConn returns.
type tunedConn struct {
	net.Conn
	raw      rawSocket
	quickAck bool // TCP_QUICKACK works here and is wanted
	linger   lingerBounds
	// lingerOn is set when the server aborted the session: Close then
	// lingers (linger.go). lingering is set while it does.
	lingerOn, lingering atomic.Bool
	// unacked is set when a read returned data and no write has gone out
	// since (a write's segment carries the acknowledgement).
	unacked atomic.Bool

	mu     sync.Mutex
	corked bool
	buf    []byte
	// frames is set once the connection carries a server's WebSocket
	// frames (see startFrames); out then follows them.
	frames bool
	out    frameCursor
}

// startFrames tells the connection that from now on it carries the
// server's side of a WebSocket: when it has no bare ACK to send, it may
// acknowledge with a pong.
func (c *tunedConn) startFrames() {
	c.mu.Lock()
	c.frames = true
	c.mu.Unlock()
}

// ack sends the acknowledgement a read still owes, just before the next
// read waits.
func (c *tunedConn) ack() {
	if c.quickAck {
		if c.unacked.Swap(false) {
			c.raw.armQuickAck() // re-arming sends it
		}
		return
	}
	// Waiting for a write under way, rather than trusting it to carry the
	// acknowledgement: its segment may have left before our data arrived.
	// Writes wait only when the peer stops reading, and then the reader
	// already waits here for room (Transport.SendNoWait).
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.frames || !c.out.between() {
		return // not a WebSocket yet, or the rest of a frame is on its way
	}
	if !c.unacked.Load() {
		return // a write since the read carried it
	}
	c.buf = append(c.buf, pongFrame...)
	if c.corked {
		return // the batch's flush sends it
	}
	c.acking(func() int {
		n, ok, err := c.raw.writeNoWait(c.buf)
		if !ok {
			// No way to write without waiting: a reader that blocks on
			// a full socket only delays itself, and the pong is tiny.
			n, err = c.Conn.Write(c.buf)
		}
		if err == nil {
			c.buf = c.buf[:copy(c.buf, c.buf[n:])]
		}
		return n
	})
}

// maxCork bounds what a corked connection holds before writing anyway.
const maxCork = 256 << 10

func (c *tunedConn) Read(p []byte) (int, error) {
	if c.unacked.Load() {
		c.ack()
	}
	n, err := c.Conn.Read(p)
	if c.lingering.Load() {
		// Close is discarding the peer's bytes: these are as late.
		return 0, net.ErrClosed
	}
	if n > 0 {
		c.unacked.Store(true)
	}
	return n, err
}

// write sends p on the socket.
func (c *tunedConn) write(p []byte) (n int, err error) {
	c.acking(func() int {
		n, err = c.Conn.Write(p)
		return n
	})
	return n, err
}

// acking runs a write that reports how many bytes went, and settles the
// acknowledgement owed: a write that sent something carried it. The flag
// is cleared before the write so that a read returning meanwhile is never
// taken as acknowledged.
func (c *tunedConn) acking(write func() int) {
	owed := c.unacked.Swap(false)
	if write() == 0 && owed {
		c.unacked.Store(true)
	}
}

func (c *tunedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frames {
		c.out.advance(p)
	}
	if c.corked && len(c.buf)+len(p) <= maxCork {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.write(p)
}

// cork holds writes back until uncork, which sends them at once.
func (c *tunedConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

func (c *tunedConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

// uncorkNoWait is uncork for a goroutine that must not block (the
// session's reader): it writes what the socket takes at once and keeps the
// rest, which the next Write or uncork sends first. It reports whether
// nothing is left.
func (c *tunedConn) uncorkNoWait() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return true, nil
	}
	var n int
	var ok bool
	var err error
	c.acking(func() int {
		n, ok, err = c.raw.writeNoWait(c.buf)
		return n
	})
	if !ok {
		return false, nil
	}
	c.buf = c.buf[:copy(c.buf, c.buf[n:])]
	return len(c.buf) == 0 && err == nil, err
}

// room reports whether n more bytes fit in the cork buffer.
func (c *tunedConn) room(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buf)+n <= maxCork
}

func (c *tunedConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.write(c.buf)
	if cap(c.buf) > maxCork {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}
