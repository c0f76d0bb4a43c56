package wsconn

import (
	"net"
	"sync"
	"sync/atomic"
)

// QuickAckListener returns l with every accepted connection wrapped by
// [QuickAckConn]. Serve HTTP on it (http.Server.Serve) and accept the
// WebSocket with [Accept]: the hijacked connection is the wrapped
// one, so both of its tunings apply to the session that runs on it.
func QuickAckListener(l net.Listener) net.Listener {
	return &quickAckListener{l}
}

type quickAckListener struct{ net.Listener }

func (l *quickAckListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return QuickAckConn(c), nil
}

// QuickAckConn returns c tuned for Cap'n Web:
//
//   - On Linux, data read and not yet acknowledged by a write of ours is
//     acknowledged at once (TCP_QUICKACK) before the next read waits.
//     Deno's WebSocket client leaves Nagle's algorithm on, and the
//     JavaScript client sends frames the server does not answer at once
//     (release, or a push it has not pulled yet). With the default delayed
//     ACK the client's next frame then waits about 40 ms: every sequential
//     call stalls. When a reply is written first, the acknowledgement rides
//     on it and no extra packet or system call is spent. Elsewhere this
//     part does nothing, and the client must set TCP_NODELAY instead.
//   - A session on a WebSocket made by [Accept] or [Dial]
//     over such a connection writes the frames it has queued with one
//     system call, as the JavaScript implementation does.
func QuickAckConn(c net.Conn) net.Conn {
	if _, ok := c.(*tunedConn); ok {
		return c
	}
	t := &tunedConn{Conn: c}
	t.raw = newRawSocket(c)
	t.raw.armQuickAck()
	return t
}

// tunedConn is the connection QuickAckConn returns.
type tunedConn struct {
	net.Conn
	raw rawSocket
	// unacked is set when a read returned data and no write has gone out
	// since (a write's segment carries the acknowledgement).
	unacked atomic.Bool

	mu     sync.Mutex
	corked bool
	buf    []byte
}

// maxCork bounds what a corked connection holds before writing anyway.
const maxCork = 256 << 10

func (c *tunedConn) Read(p []byte) (int, error) {
	if c.unacked.Swap(false) {
		c.raw.armQuickAck() // also sends the acknowledgement still owed
	}
	n, err := c.Conn.Read(p)
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
