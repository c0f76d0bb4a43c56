package rpc

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/permissions"
)

// openFDs counts this process's open file descriptors (Linux).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd on this system; the bound is checked through Stats")
	}
	return len(ents)
}

// A script that may reach the bridge's port opens thousands of TCP
// connections and sends nothing (one run held 14,000 of them, 14,197 file
// descriptors): the bridge keeps at most MaxConnecting of them, closing the
// oldest, and a real client still authenticates in the middle of the flood.
func TestSilentConnectionFloodIsBounded(t *testing.T) {
	r := newRig(t, Config{MaxConnecting: 64})
	tok, err := r.b.Mint(principal("run1", permissions.CapUI))
	require.NoError(t, err)
	before := openFDs(t)
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	const flood = 1500
	for range flood {
		c, err := net.Dial("tcp", r.b.Addr())
		require.NoError(t, err)
		held = append(held, c)
	}
	// The client's ends are this process's too: count the server's by
	// what is left over the flood's own descriptors.
	require.Eventually(t, func() bool {
		st := r.b.Stats()
		return st.Connecting <= 64 && st.ConnectingShed >= flood-64
	}, 10*time.Second, 5*time.Millisecond, "every connection accepted, the oldest shed")
	serverFDs := openFDs(t) - before - flood
	t.Logf("%d silent connections: %d kept by the bridge, %d shed; server descriptors over the start: %d",
		flood, r.b.Stats().Connecting, r.b.Stats().ConnectingShed, serverFDs)
	assert.LessOrEqual(t, serverFDs, 64+16, "the bridge holds a descriptor per silent connection")

	reply, err := auth(t, dial(t, r.b, nil), tok, hello(allCaps...))
	require.NoError(t, err, "a real client is not locked out")
	assert.True(t, strings.HasPrefix(reply, "OK "), reply)
}
