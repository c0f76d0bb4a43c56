//go:build linux

package capnweb

import (
	"net"
	"syscall"
)

const quickAckSupported = true

// tcpQuickAck is TCP_QUICKACK from <netinet/tcp.h>.
const tcpQuickAck = 12

// QuickAckConn returns c wrapped so that TCP_QUICKACK is re-armed after
// every read (the kernel clears it after each ACK it sends).
//
// Why: Deno's WebSocket client leaves Nagle's algorithm on, and the
// JavaScript client sends small frames (push, pull, release) that the
// server does not answer at once. Linux then delays its ACK by about
// 40 ms, and the client's next frame waits for it: every sequential call
// stalls. Acknowledging at once removes the stall. A connection that is
// not a TCP socket is returned unchanged.
func QuickAckConn(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	q := &quickAckConn{Conn: c, rc: rc}
	q.arm()
	return q
}

type quickAckConn struct {
	net.Conn
	rc syscall.RawConn
}

func (c *quickAckConn) arm() {
	c.rc.Control(func(fd uintptr) {
		// Best effort: on failure the connection merely stays slower.
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpQuickAck, 1)
	})
}

// quickAckMaxRead is the largest read after which TCP_QUICKACK is
// re-armed. A small read is a lone frame the server may not answer (the
// JavaScript client's release, or a push it has not pulled yet): its ACK
// must not wait. A large read means the peer is streaming many calls; the
// answers then carry the ACKs, and immediate ACKs would only make the
// peer's Nagle send smaller segments.
var quickAckMaxRead = 512

func (c *quickAckConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && n <= quickAckMaxRead {
		c.arm()
	}
	return n, err
}
