package wire

import (
	"bufio"
	"fmt"
	"io"
)

// How much of a dropped message is kept: enough of its start for the
// reply's "id", which Chromium writes first, and of its end for the
// "sessionId", which it writes last.
const (
	HeadLen = 64
	TailLen = 256
)

// Dropped records a message read past because it was over a limit: its
// size and its first and last bytes, so that the reader can still tell
// whose reply it was. It is an io.Writer, fed the message as it streams
// by, and the error a reader returns for such a message.
type Dropped struct {
	Size, Limit int64
	Head, Tail  []byte
}

func (d *Dropped) Error() string {
	return fmt.Sprintf("message of %d bytes over the limit of %d", d.Size, d.Limit)
}

// Write records p as the next part of the dropped message, keeping only
// the bounded head and tail.
func (d *Dropped) Write(p []byte) (int, error) {
	d.Size += int64(len(p))
	if n := HeadLen - len(d.Head); n > 0 {
		d.Head = append(d.Head, p[:min(n, len(p))]...)
	}
	d.Tail = append(d.Tail, p[max(0, len(p)-TailLen):]...)
	if over := len(d.Tail) - TailLen; over > 0 {
		d.Tail = append(d.Tail[:0], d.Tail[over:]...)
	}
	return len(p), nil
}

// NULReader splits a byte stream into NUL-terminated messages, as the
// browser's debugging pipe frames them. Memory stays bounded by the size
// limit: a longer message is read past, keeping only its head and tail,
// and reported as a *Dropped.
type NULReader struct {
	br  *bufio.Reader
	max int64
}

// NewNULReader reads r through a buffer of bufSize bytes, holding
// messages to maxSize; messages larger than the buffer are assembled from
// several reads.
func NewNULReader(r io.Reader, maxSize int64, bufSize int) *NULReader {
	return &NULReader{br: bufio.NewReaderSize(r, bufSize), max: maxSize}
}

// Next returns the next message without its NUL, in a slice of its own. A
// stream that ends between messages gives io.EOF; one that ends inside a
// message gives io.ErrUnexpectedEOF. A message longer than one buffer is
// held to what limitOf (when not nil) answers for its first buffer, if
// that is less than the reader's own limit.
func (r *NULReader) Next(limitOf func([]byte) int64) ([]byte, error) {
	var msg []byte
	var over *Dropped
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
			over = &Dropped{Limit: limit}
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
