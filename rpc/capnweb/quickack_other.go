//go:build !linux

package capnweb

import "net"

const quickAckSupported = false

// QuickAckConn returns c unchanged: TCP_QUICKACK exists only on Linux.
// Elsewhere the stall it avoids must be fixed on the client side, with a
// socket that sets TCP_NODELAY.
func QuickAckConn(c net.Conn) net.Conn { return c }
