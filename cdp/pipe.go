package cdp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// pipeTransport speaks CDP over the pipe pair of a browser started with
// --remote-debugging-pipe: each message is JSON followed by a NUL byte. No
// port is opened, so nothing but the launching process can reach the
// browser.
type pipeTransport struct {
	in   *os.File // the browser's output (its fd 4)
	out  *os.File // the browser's input (its fd 3)
	nr   *nulReader
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
	return &pipeTransport{in: in, out: out, nr: newNULReader(in, maxSize, 64<<10)}
}

// readMessage blocks in the file read, not on ctx: close unblocks it.
func (t *pipeTransport) readMessage(_ context.Context, limitOf func([]byte) int64) ([]byte, error) {
	b, err := t.nr.next(limitOf)
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

// nulReader splits a byte stream into NUL-terminated messages. Memory stays
// bounded by the size limit: a longer message is read past, keeping only
// its head and tail, and reported as an *oversizeError.
type nulReader struct {
	br  *bufio.Reader
	max int64
}

// newNULReader reads r through a buffer of bufSize bytes; messages larger
// than the buffer are assembled from several reads.
func newNULReader(r io.Reader, maxSize int64, bufSize int) *nulReader {
	return &nulReader{br: bufio.NewReaderSize(r, bufSize), max: maxSize}
}

// next returns the next message without its NUL, in a slice of its own. A
// stream that ends between messages gives io.EOF; one that ends inside a
// message gives io.ErrUnexpectedEOF. A message longer than one buffer is
// held to what limitOf (when not nil) answers for its first buffer, if
// that is less than the reader's own limit.
func (r *nulReader) next(limitOf func([]byte) int64) ([]byte, error) {
	var msg []byte
	var over *oversizeError
	limit := r.max
	for first := true; ; first = false {
		chunk, err := r.br.ReadSlice(0)
		last := err == nil
		if last {
			chunk = chunk[:len(chunk)-1]
		}
		if first && !last && limitOf != nil {
			if l := limitOf(chunk); l > 0 && l < limit {
				limit = l
			}
		}
		switch {
		case over != nil:
			over.Write(chunk)
		case int64(len(msg))+int64(len(chunk)) > limit:
			over = &oversizeError{limit: limit, metered: limit < r.max}
			over.Write(msg)
			over.Write(chunk)
			msg = nil
		case last && msg == nil:
			// The common case: the whole message was in the buffer.
			return append(make([]byte, 0, len(chunk)), chunk...), nil
		default:
			msg = append(msg, chunk...)
		}
		if last {
			if over != nil {
				return nil, over
			}
			return msg, nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			if msg == nil && over == nil && len(chunk) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read pipe: %w", err)
	}
}
