package capnweb

import (
	"context"
	"fmt"
)

// Transport carries whole messages between the two peers. Cap'n Web needs
// nothing else: no handshake, no framing of its own.
//
// A session calls Recv from one goroutine and Send from one other
// goroutine; Close may be called concurrently with both and must make them
// return.
type Transport interface {
	// Send delivers one text message. It must not keep msg after it returns.
	Send(ctx context.Context, msg []byte) error
	// Recv returns the next text message, which the session is done with
	// before it calls Recv again (so a transport may reuse the buffer).
	// When the peer has closed the
	// connection it returns an error, ideally a *CloseError. A frame the
	// transport refuses (too big, binary) is reported with an error wrapping
	// ErrLimit or ErrProtocol: the session then aborts with that message.
	Recv(ctx context.Context) ([]byte, error)
	// Close ends the connection. reason is nil for a normal close, or why the
	// session aborted.
	Close(reason error) error
}

// CloseError reports that the peer closed the connection, with the
// WebSocket close code and reason (the JavaScript peer uses 3000 for an
// abort and for a script disposing its main stub).
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("peer closed WebSocket: %d %s", e.Code, e.Reason)
}

// ioBinder is implemented by transports whose I/O can be tied to the
// session's I/O context once, rather than per Send and Recv.
type ioBinder interface {
	bindIO(ctx context.Context)
}

// batcher is implemented by transports that can send several messages
// with one write: the session brackets a run of Sends with beginBatch and
// endBatch.
type batcher interface {
	beginBatch()
	endBatch() error
}

// noWaitSender is implemented by transports that can send without waiting
// for the peer to read, which lets the session's reader write its own
// replies instead of waking the writer goroutine (see WebSocket.sendNoWait).
type noWaitSender interface {
	batcher
	sendNoWait(ctx context.Context, frames [][]byte) (sent, flushed bool, err error)
}
