package capnweb

import (
	"net"
	"sync"
)

// QuickAckListener returns l with every accepted connection wrapped by
// [QuickAckConn]. Serve HTTP on it (http.Server.Serve) and accept the
// WebSocket with [AcceptWebSocket]: the hijacked connection is the wrapped
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
//   - On Linux, TCP_QUICKACK is re-armed after every read (the kernel
//     clears it after each ACK). Deno's WebSocket client leaves Nagle's
//     algorithm on, and the JavaScript client sends frames the server does
//     not answer at once (release, or a push it has not pulled yet). With
//     the default delayed ACK the client's next frame then waits about
//     40 ms: every sequential call stalls. Elsewhere this part does
//     nothing, and the client must set TCP_NODELAY instead.
//   - A session on a WebSocket made by [AcceptWebSocket] or [DialWebSocket]
//     over such a connection writes the frames it has queued with one
//     system call, as the JavaScript implementation does.
func QuickAckConn(c net.Conn) net.Conn {
	if _, ok := c.(*tunedConn); ok {
		return c
	}
	t := &tunedConn{Conn: c}
	t.qa = newQuickAcker(c)
	t.qa.arm()
	return t
}

// tunedConn is the connection QuickAckConn returns.
type tunedConn struct {
	net.Conn
	qa quickAcker

	mu     sync.Mutex
	corked bool
	buf    []byte
}

// maxCork bounds what a corked connection holds before writing anyway.
const maxCork = 256 << 10

func (c *tunedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.qa.arm()
	}
	return n, err
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
	return c.Conn.Write(p)
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

func (c *tunedConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > maxCork {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}
