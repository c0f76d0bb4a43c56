//go:build !linux

package capnweb

import "net"

// rawSocket does nothing here: TCP_QUICKACK exists only on Linux.
// Elsewhere the stall it avoids must be fixed on the client side, with a
// socket that sets TCP_NODELAY.
type rawSocket struct{}

func newRawSocket(net.Conn) rawSocket { return rawSocket{} }

func (rawSocket) armQuickAck() {}

func (rawSocket) writeNoWait([]byte) (int, bool, error) { return 0, false, nil }
