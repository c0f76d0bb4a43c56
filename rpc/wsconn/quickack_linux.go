//go:build linux

package wsconn

import "syscall"

// tcpQuickAck is TCP_QUICKACK from <netinet/tcp.h>.
const tcpQuickAck = 12

// armQuickAck re-arms TCP_QUICKACK and reports whether it could.
func (r rawSocket) armQuickAck() bool {
	if r.rc == nil {
		return false
	}
	var err error
	cerr := r.rc.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpQuickAck, 1)
	})
	// On failure the connection acknowledges with pongs instead.
	return cerr == nil && err == nil
}
