//go:build linux

package wsconn

import "syscall"

// tcpQuickAck is TCP_QUICKACK from <netinet/tcp.h>.
const tcpQuickAck = 12

// armQuickAck re-arms TCP_QUICKACK.
func (r rawSocket) armQuickAck() {
	if r.rc == nil {
		return
	}
	r.rc.Control(func(fd uintptr) {
		// Best effort: on failure the connection merely stays slower.
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpQuickAck, 1)
	})
}
