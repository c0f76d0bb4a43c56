//go:build !linux

package wsconn

// armQuickAck does nothing and reports false: TCP_QUICKACK exists only on
// Linux. Elsewhere a tuned connection acknowledges with a pong.
func (rawSocket) armQuickAck() bool { return false }
