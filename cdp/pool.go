package cdp

import (
	"context"
	"sync"
)

// Pool shares connections and their page gateways among many users: one
// [Browser] per endpoint, dialled on first use and again once it is lost,
// and one [Gateway] per connection, its own or one the caller dialled. The
// zero value is ready to use; it is safe for concurrent use.
//
// A Pool starts no goroutines of its own: the connections and gateways it
// holds own theirs, and [Pool.Close] stops them.
type Pool struct {
	mu     sync.Mutex
	closed bool
	conns  map[string]*Browser   // dialled here, by endpoint
	guards map[*Browser]*Gateway // one Guard each, given back by Close
}

// Browser returns the pool's live connection to endpoint (see [Connect]),
// dialling one if it has none. Dialling does not hold up users of other
// endpoints. After Close it is [ErrBrowserClosed].
func (p *Pool) Browser(ctx context.Context, endpoint string) (*Browser, error) {
	p.mu.Lock()
	c := p.conns[endpoint]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrBrowserClosed
	}
	if c != nil && c.Err() == nil {
		return c, nil
	}
	c, err := Connect(ctx, endpoint, nil)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return nil, ErrBrowserClosed
	}
	if other := p.conns[endpoint]; other != nil && other.Err() == nil {
		c.Close() // another user dialled it meanwhile: one connection each
		return other, nil
	} else if other != nil {
		p.dropLocked(other)
	}
	if p.conns == nil {
		p.conns = map[string]*Browser{}
	}
	p.conns[endpoint] = c
	return c, nil
}

// Guard returns the gateway that enforces policy on b, putting one on
// it on first use (see [Guard]: a later policy's denials add to it). b
// may be one of the pool's connections or the caller's; the pool closes
// only its own.
func (p *Pool) Guard(ctx context.Context, b *Browser, policy PagePolicy) (*Gateway, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrBrowserClosed
	}
	if g := p.guards[b]; g != nil && b.Err() == nil {
		return g, nil
	}
	// Gateways of lost connections go first: they hold nothing more.
	for old, g := range p.guards {
		if old.Err() != nil {
			g.Close()
			delete(p.guards, old)
		}
	}
	g, err := Guard(ctx, b, policy)
	if err != nil {
		return nil, err
	}
	if p.guards == nil {
		p.guards = map[*Browser]*Gateway{}
	}
	p.guards[b] = g
	return g, nil
}

// dropLocked closes a lost connection of the pool's and its gateway.
func (p *Pool) dropLocked(c *Browser) {
	if g := p.guards[c]; g != nil {
		g.Close()
		delete(p.guards, c)
	}
	c.Close()
}

// Close gives back every gateway and closes every connection the pool
// dialled, waiting for their goroutines; connections the caller gave to
// Guard stay open. Later calls get [ErrBrowserClosed]. It is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, g := range p.guards {
		g.Close()
	}
	clear(p.guards)
	for _, c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	return nil
}
