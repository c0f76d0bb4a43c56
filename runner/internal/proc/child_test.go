package proc

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// started starts spec as the runner starts deno, its standard output to a
// pipe, and returns the child with a reader of that output; the test's
// cleanup kills it and waits for it.
func started(t *testing.T, spec Spec) (*Child, *bufio.Reader) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	spec.Stdout = w
	c, err := Start(spec)
	w.Close()
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Kill()
		<-c.Exited()
	})
	return c, bufio.NewReader(r)
}

// line reads the child's next line of output.
func line(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	require.NoError(t, err, "the child said %q", s)
	return strings.TrimSpace(s)
}

func wait(t *testing.T, c *Child) {
	t.Helper()
	select {
	case <-c.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("the child did not exit")
	}
}
