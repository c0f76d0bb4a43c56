package capnweb

import "net"

// QuickAckListener returns l with every accepted connection wrapped by
// [QuickAckConn]. Serve HTTP on it (http.Server.Serve) and accept the
// WebSocket as usual: the hijacked connection is the wrapped one, so the
// fix applies to the session that runs on it. Elsewhere than Linux it
// returns l unchanged.
func QuickAckListener(l net.Listener) net.Listener {
	if !quickAckSupported {
		return l
	}
	return &quickAckListener{l}
}

type quickAckListener struct{ net.Listener }

func (l *quickAckListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return QuickAckConn(c), nil
}
