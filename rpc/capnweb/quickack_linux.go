//go:build linux

package capnweb

import (
	"net"
	"syscall"
)

// tcpQuickAck is TCP_QUICKACK from <netinet/tcp.h>.
const tcpQuickAck = 12

// quickAcker re-arms TCP_QUICKACK on one socket.
type quickAcker struct{ rc syscall.RawConn }

func newQuickAcker(c net.Conn) quickAcker {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return quickAcker{}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return quickAcker{}
	}
	return quickAcker{rc: rc}
}

func (q quickAcker) arm() {
	if q.rc == nil {
		return
	}
	q.rc.Control(func(fd uintptr) {
		// Best effort: on failure the connection merely stays slower.
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpQuickAck, 1)
	})
}
