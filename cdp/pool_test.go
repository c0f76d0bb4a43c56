package cdp

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pool dials an endpoint once for all its users, puts one gateway on each
// connection, dials again once the connection is lost, and closes what it
// dialled but not a connection it was handed.
func TestPoolSharesConnectionsAndGateways(t *testing.T) {
	p := launchWithPort(t)
	ctx := tctx(t, 30*time.Second)
	var pool Pool

	conns := make([]*Browser, 4)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			c, err := pool.Browser(ctx, p.Endpoint())
			assert.NoError(t, err)
			conns[i] = c
		})
	}
	wg.Wait()
	require.NotNil(t, conns[0])
	for _, c := range conns[1:] {
		assert.Same(t, conns[0], c, "one connection per endpoint, however many dial at once")
	}
	c := conns[0]

	g, err := pool.Guard(ctx, c, PagePolicy{})
	require.NoError(t, err)
	again, err := pool.Guard(ctx, c, PagePolicy{})
	require.NoError(t, err)
	assert.Same(t, g, again, "one gateway per connection")

	// The caller's own connection gets a gateway too, and stays the caller's.
	mine, err := Connect(ctx, p.Endpoint(), nil)
	require.NoError(t, err)
	defer mine.Close()
	gm, err := pool.Guard(ctx, mine, PagePolicy{})
	require.NoError(t, err)
	assert.NotSame(t, g, gm)

	// A lost connection is dialled again, with a gateway of its own.
	c.Close()
	fresh, err := pool.Browser(ctx, p.Endpoint())
	require.NoError(t, err)
	assert.NotSame(t, c, fresh)
	assert.NoError(t, fresh.Err())
	gf, err := pool.Guard(ctx, fresh, PagePolicy{})
	require.NoError(t, err)
	assert.NotSame(t, g, gf)

	require.NoError(t, pool.Close())
	assert.Error(t, fresh.Err(), "the pool's connection is closed")
	assert.NoError(t, mine.Err(), "the caller's connection stays open")
	select {
	case <-gm.done:
	default:
		t.Error("the gateway on the caller's connection is given back")
	}
	_, err = pool.Browser(ctx, p.Endpoint())
	assert.True(t, errors.Is(err, ErrBrowserClosed), "after Close: %v", err)
	_, err = pool.Guard(ctx, mine, PagePolicy{})
	assert.True(t, errors.Is(err, ErrBrowserClosed), "after Close: %v", err)
}
