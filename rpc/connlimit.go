package rpc

import (
	"net"
	"net/http"
	"sync"
)

// DefaultMaxConnecting is Config.MaxConnecting's zero value.
const DefaultMaxConnecting = 1024

// connecting bounds the bridge's connections that have not yet become
// WebSockets: TCP connections that have sent no request, or only part of
// one. Every run may reach the bridge's port, so a script that declares
// nothing could otherwise hold thousands of them, each a file descriptor
// and a goroutine, for the whole ReadHeaderTimeout. Past the bound the
// oldest is closed, as the handshake table drops its oldest, so that a
// flood of silent connections cannot lock out a real client: a real
// client sends its request as soon as it connects and leaves this table
// (hijacked by the upgrade) within a moment. The bound is large enough
// that a flood must open a thousand connections within that moment to
// close a real client's, and small enough that what the silent ones hold
// (a descriptor, a goroutine and a read buffer each: about 20 MiB) stays
// small beside a run's memory budget.
//
// It is driven by http.Server.ConnState, on the server's goroutines.
type connecting struct {
	max int

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	order  []net.Conn // oldest first; may hold conns already gone
	closed int64      // connections closed for the bound
}

func newConnecting(max int) *connecting {
	return &connecting{max: max, open: map[net.Conn]struct{}{}}
}

// state is the server's ConnState hook.
func (c *connecting) state(conn net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		var evict net.Conn
		c.mu.Lock()
		c.open[conn] = struct{}{}
		c.order = append(c.order, conn)
		if len(c.open) > c.max {
			evict = c.oldestLocked()
			delete(c.open, evict)
			c.closed++
		}
		c.compactLocked()
		c.mu.Unlock()
		if evict != nil {
			evict.Close()
		}
	case http.StateHijacked, http.StateClosed:
		c.mu.Lock()
		delete(c.open, conn)
		c.compactLocked()
		c.mu.Unlock()
	}
}

// oldestLocked pops the oldest connection still open.
func (c *connecting) oldestLocked() net.Conn {
	for {
		conn := c.order[0]
		c.order[0] = nil
		c.order = c.order[1:]
		if _, ok := c.open[conn]; ok {
			return conn
		}
	}
}

// compactLocked drops gone connections from the front of order, and
// rebuilds it when most of it is gone, so it stays within a small factor
// of what is open.
func (c *connecting) compactLocked() {
	for len(c.order) > 0 {
		if _, ok := c.open[c.order[0]]; ok {
			break
		}
		c.order[0] = nil
		c.order = c.order[1:]
	}
	if len(c.order) > 2*len(c.open)+64 {
		kept := make([]net.Conn, 0, len(c.open))
		for _, conn := range c.order {
			if _, ok := c.open[conn]; ok {
				kept = append(kept, conn)
			}
		}
		c.order = kept
	}
}

// stats reports the connections open now and those closed for the bound.
func (c *connecting) stats() (open int, closed int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open), c.closed
}
