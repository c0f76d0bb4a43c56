//go:build !linux

package wsconn

// armQuickAck does nothing: TCP_QUICKACK exists only on Linux. Elsewhere
// the stall it avoids must be fixed on the client side, with a socket that
// sets TCP_NODELAY.
func (rawSocket) armQuickAck() {}
