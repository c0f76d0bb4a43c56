package cdp

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadPipe is a browser connection whose writes fail as a dead browser's
// pipe does (EPIPE) while its reader has not yet seen the end.
type deadPipe struct{ closed chan struct{} }

func (p *deadPipe) readMessage(ctx context.Context, _ func([]byte) int64) ([]byte, error) {
	select {
	case <-p.closed:
	case <-ctx.Done():
	}
	return nil, errors.New("read after close")
}

func (p *deadPipe) writeMessage(context.Context, []byte) error { return syscall.EPIPE }

func (p *deadPipe) close() error {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	return nil
}

// A write the browser's connection no longer takes ends the connection
// as the browser's close, whichever side notices first: the call that
// wrote, and every call waiting on the connection, fail ErrBrowserClosed,
// not with the system's "broken pipe".
func TestWriteToADeadBrowserIsItsClose(t *testing.T) {
	m := newMux(&deadPipe{closed: make(chan struct{})}, 1<<20)
	defer m.close()
	err := m.write([]byte(`{"id":1,"method":"Browser.getVersion"}`))
	require.ErrorIs(t, err, ErrBrowserClosed)
	assert.ErrorContains(t, err, "broken pipe", "the cause is named")
	assert.ErrorIs(t, m.write([]byte(`{}`)), ErrBrowserClosed, "and so does every later write")
	select {
	case <-m.ctx.Done():
	default:
		t.Fatal("the connection was not ended")
	}
}
