package wsconn

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCorkedWritesLeaveTogether checks that a batch of frames leaves the
// tuned connection as one write, and that writes pass straight through
// outside a batch.
func TestCorkedWritesLeaveTogether(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	tc := QuickAckConn(a).(*tunedConn)
	require.Same(t, tc, QuickAckConn(tc), "wrapping twice is a no-op")

	reads := make(chan string, 4)
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := b.Read(buf)
			if err != nil {
				close(reads)
				return
			}
			reads <- string(buf[:n])
		}
	}()

	tc.cork()
	for _, s := range []string{"one ", "two ", "three"} {
		n, err := tc.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	require.Empty(t, reads, "nothing leaves while corked")
	require.NoError(t, tc.uncork())
	require.Equal(t, "one two three", <-reads)

	_, err := tc.Write([]byte("alone"))
	require.NoError(t, err)
	require.Equal(t, "alone", <-reads)

	// A write error surfaces at uncork.
	tc.cork()
	_, err = tc.Write([]byte("lost"))
	require.NoError(t, err)
	b.Close()
	require.ErrorIs(t, tc.uncork(), io.ErrClosedPipe)
}
