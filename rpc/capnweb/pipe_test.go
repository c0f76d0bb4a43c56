package capnweb

import (
	"context"
	"sync"
)

// memConn is one end of an in-memory Transport pair.
type memConn struct {
	in     chan []byte
	out    chan []byte
	closed chan struct{}
	peer   *memConn
	once   sync.Once

	mu     sync.Mutex
	reason error
	sent   [][]byte
}

// memPipe returns two connected in-memory transports.
func memPipe() (*memConn, *memConn) {
	a2b := make(chan []byte, 1024)
	b2a := make(chan []byte, 1024)
	a := &memConn{in: b2a, out: a2b, closed: make(chan struct{})}
	b := &memConn{in: a2b, out: b2a, closed: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func (c *memConn) Send(ctx context.Context, msg []byte) error {
	cp := append([]byte(nil), msg...)
	c.mu.Lock()
	c.sent = append(c.sent, cp)
	c.mu.Unlock()
	select {
	case c.out <- cp:
		return nil
	case <-c.closed:
		return &CloseError{Code: 1006, Reason: "closed"}
	case <-c.peer.closed:
		return &CloseError{Code: 1006, Reason: "peer closed"}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *memConn) Recv(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.closed:
		return nil, &CloseError{Code: 1006, Reason: "closed"}
	case <-c.peer.closed:
		// Frames sent before the close come first.
		select {
		case m := <-c.in:
			return m, nil
		default:
		}
		c.peer.mu.Lock()
		r := c.peer.reason
		c.peer.mu.Unlock()
		if r != nil {
			return nil, &CloseError{Code: 3000, Reason: WireMessage(r)}
		}
		return nil, &CloseError{Code: 1000}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *memConn) Close(reason error) error {
	c.once.Do(func() {
		c.mu.Lock()
		c.reason = reason
		c.mu.Unlock()
		close(c.closed)
	})
	return nil
}
