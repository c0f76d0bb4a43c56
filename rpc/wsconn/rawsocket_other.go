//go:build !unix

package wsconn

import "net"

// rawSocket reaches nothing here: writes always go through net.Conn, and
// the session's reader leaves its replies to the writer goroutine.
type rawSocket struct{}

func newRawSocket(net.Conn) rawSocket { return rawSocket{} }

func (rawSocket) writeNoWait([]byte) (int, bool, error) { return 0, false, nil }
