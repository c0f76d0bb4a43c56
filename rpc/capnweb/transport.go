package capnweb

import (
	"context"
	"fmt"
)

// Transport carries whole messages between the two peers. Cap'n Web needs
// nothing else: no handshake, no framing of its own.
//
// A session never calls Recv concurrently with itself, nor Send (or the
// methods of the optional interfaces below) concurrently with each other,
// though each may be called from more than one goroutine over the
// session's life. Close may be called concurrently with all of them and
// must make them return.
//
// A transport may also implement [IOBinder], [Batcher] and
// [NoWaitSender], which the session finds with a type assertion: each
// saves work on the path of every call, and a session works without them.
type Transport interface {
	// Send delivers one text message. It must not keep msg after it returns.
	Send(ctx context.Context, msg []byte) error
	// Recv returns the next text message, which the session is done with
	// before it calls Recv again (so a transport may reuse the buffer).
	// When the peer has closed the connection it returns an error, ideally
	// a *CloseError. A frame the
	// transport refuses (too big, binary) is reported with an error wrapping
	// ErrLimit or ErrProtocol: the session then aborts with that message.
	Recv(ctx context.Context) ([]byte, error)
	// Close ends the connection. reason is nil for a normal close, or why the
	// session aborted ([WireMessage] gives the text to show the peer).
	Close(reason error) error
}

// IOBinder is implemented by a transport whose I/O can be tied once to the
// context that bounds all of a session's I/O, rather than to the context
// of each Send and Recv: per-message cancellation has a cost (a
// WebSocket library registers and removes a callback per frame).
//
// A session calls BindIO once, before its first Send or Recv, and then
// passes that same ctx to every Send and Recv. Once ctx is done the
// transport must end its I/O, as if Close had been called.
type IOBinder interface {
	BindIO(ctx context.Context)
}

// Batcher is implemented by a transport that can send several messages
// with one write (one system call, one TCP segment), as the JavaScript
// implementation does for the messages of one tick.
//
// The session brackets a run of Sends with BeginBatch and EndBatch: the
// transport may hold the messages back until EndBatch, which writes what
// is held, in order, and returns the first error of the batch. The
// session also calls EndBatch on its own, without BeginBatch, to have
// written whatever a [NoWaitSender] left behind; with nothing held it
// does nothing.
type Batcher interface {
	BeginBatch()
	EndBatch() error
}

// NoWaitSender is implemented by a transport that can send without
// waiting for the peer to read.
//
// The session's reader goroutine must never wait on a full socket: a peer
// whose reader waits the same way would stop both sides. Without this
// interface the reader hands every message it produces (a call's reply,
// say) to the session's writer goroutine, and waking that goroutine costs
// more than most calls. With it the reader writes its own replies.
type NoWaitSender interface {
	Batcher
	// SendNoWait sends msgs, in order, without waiting for room in the
	// transport's buffers. It reports sent=false, having sent nothing,
	// when it cannot do so now (the session then sends them the ordinary
	// way). With sent=true the messages are on their way, and flushed
	// reports whether all of them were written; when they were not, the
	// next EndBatch or Send writes the rest first.
	SendNoWait(ctx context.Context, msgs [][]byte) (sent, flushed bool, err error)
}

// CloseError reports that the peer closed the connection, with the
// WebSocket close code and reason (the JavaScript peer uses 3000 for an
// abort and for a script disposing its main stub).
type CloseError struct {
	Code   int    // the close code, 1000 for a normal closure
	Reason string // the close reason, often empty
}

// Error implements error.
func (e *CloseError) Error() string {
	return fmt.Sprintf("peer closed WebSocket: %d %s", e.Code, e.Reason)
}
