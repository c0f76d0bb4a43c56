//go:build unix

package wsconn

import (
	"errors"
	"net"
	"syscall"
)

// rawSocket reaches one TCP socket below net.Conn.
type rawSocket struct{ rc syscall.RawConn }

func newRawSocket(c net.Conn) rawSocket {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return rawSocket{}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return rawSocket{}
	}
	return rawSocket{rc: rc}
}

// writeNoWait makes one write attempt that never waits for room in the
// socket's buffer, and reports how much went. ok is false when the socket
// cannot be written this way.
func (r rawSocket) writeNoWait(p []byte) (n int, ok bool, err error) {
	if r.rc == nil {
		return 0, false, nil
	}
	werr := r.rc.Write(func(fd uintptr) bool {
		// Go's sockets are non-blocking: a full buffer gives EAGAIN.
		n, err = syscall.Write(int(fd), p)
		return true
	})
	if n < 0 {
		n = 0
	}
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		err = nil
	}
	if err == nil {
		err = werr
	}
	return n, true, err
}
