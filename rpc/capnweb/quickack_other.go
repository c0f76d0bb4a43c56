//go:build !linux

package capnweb

import "net"

// quickAcker does nothing: TCP_QUICKACK exists only on Linux. Elsewhere
// the stall it avoids must be fixed on the client side, with a socket that
// sets TCP_NODELAY.
type quickAcker struct{}

func newQuickAcker(net.Conn) quickAcker { return quickAcker{} }

func (quickAcker) arm() {}
