package cdp

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/tranquil/automation/cdp/internal/wire"
)

// pipeTransport speaks CDP over the pipe pair of a browser started with
// --remote-debugging-pipe: each message is JSON followed by a NUL byte. No
// port is opened, so nothing but the launching process can reach the
// browser.
type pipeTransport struct {
	in   *os.File // the browser's output (its fd 4)
	out  *os.File // the browser's input (its fd 3)
	nr   *wire.NULReader
	max  int64  // the size limit, to tell a dropped message's limit from a meter's
	wbuf []byte // message and NUL, for one write; the mux serialises writes

	once     sync.Once
	closeErr error
}

// ConnectPipe opens a browser connection over the debugging pipes of a
// browser started with --remote-debugging-pipe: in is what the browser
// writes (its fd 4), out what it reads (its fd 3). The connection owns both
// files and Close closes them; Chromium exits when its pipe closes. It
// returns once the browser-level session is open, without asking the
// browser anything: a caller that must know the browser serves commands
// asks it one. Package launch starts browsers this way.
func ConnectPipe(ctx context.Context, in, out *os.File, opts *Options) (*Browser, error) {
	o := opts.withDefaults()
	return newBrowser(ctx, newMux(newPipeTransport(in, out, o.MaxMessageSize), o.MaxMessageSize), "")
}

func newPipeTransport(in, out *os.File, maxSize int64) *pipeTransport {
	return &pipeTransport{in: in, out: out, nr: wire.NewNULReader(in, maxSize, 64<<10), max: maxSize}
}

// readMessage blocks in the file read, not on ctx: close unblocks it.
func (t *pipeTransport) readMessage(_ context.Context, limitOf func([]byte) int64) ([]byte, error) {
	b, err := t.nr.Next(limitOf)
	var d *wire.Dropped
	if errors.As(err, &d) {
		return nil, &oversizeError{Dropped: *d, metered: d.Limit < t.max}
	}
	if errors.Is(err, os.ErrClosed) {
		err = errors.New("pipe closed")
	}
	return b, err
}

func (t *pipeTransport) writeMessage(_ context.Context, b []byte) error {
	const small = 64 << 10
	if len(b) < small {
		// One write for message and terminator: a copy costs less than
		// a second system call.
		t.wbuf = append(append(t.wbuf[:0], b...), 0)
		_, err := t.out.Write(t.wbuf)
		return err
	}
	if _, err := t.out.Write(b); err != nil {
		return err
	}
	_, err := t.out.Write([]byte{0})
	return err
}

// close closes both ends; the browser reads EOF and shuts down.
func (t *pipeTransport) close() error {
	t.once.Do(func() {
		t.closeErr = errors.Join(t.out.Close(), t.in.Close())
	})
	return t.closeErr
}
