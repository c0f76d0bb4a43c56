// Package wsconn carries Cap'n Web sessions (package rpc/capnweb) over
// WebSockets (github.com/coder/websocket), with the TCP tuning a Deno
// client needs.
//
// Entry points:
//
//   - [QuickAckListener] wraps a server's listener so that every
//     connection it accepts is tuned (see below); [TuneListener] does so
//     with options; [QuickAckConn] tunes one connection.
//   - [Accept] upgrades an HTTP request to a [Transport] for
//     capnweb.NewSession or capnweb.Serve. [Transport.Conn] lets the server
//     exchange frames of its own first, such as an authentication
//     handshake.
//   - [Dial] connects to a Cap'n Web server as a client, tuned the same
//     way.
//   - [New] wraps a github.com/coder/websocket connection you already
//     have; the session then writes without batching.
//
// Each message travels as one text frame, as the JavaScript implementation
// sends it. A peer's close arrives as a *capnweb.CloseError, an abort
// leaves with close code [StatusAbort] and its reason, a frame over the
// read limit ends the session with capnweb.ErrLimit and a binary frame
// with capnweb.ErrProtocol.
//
// # The delayed-ACK stall
//
// Deno's WebSocket client leaves Nagle's algorithm on, and the JavaScript
// client sends small frames the server does not answer at once (pull,
// release). With the server's delayed ACK every sequential call then
// waits about 40 ms (200 ms on Windows). A tuned connection acknowledges
// such data before its next read waits: on Linux by re-arming
// TCP_QUICKACK, elsewhere, once [Accept] has made it a WebSocket, with an
// unsolicited empty pong (RFC 6455 §5.5.3), which clients ignore and
// whose segment carries the ACK. Serve HTTP on QuickAckListener(ln), or
// wrap connections with QuickAckConn before they reach the HTTP server,
// and accept with Accept, whose hijacked connection is then the tuned
// one. [TuneListener] with NoQuickAck uses the pong on Linux too, to test
// what other systems see. A client that sets TCP_NODELAY needs neither.
//
// # Batched writes
//
// A Transport over a tuned connection also implements capnweb.Batcher
// and capnweb.NoWaitSender: the frames a session has queued leave with one
// system call, and the session's reader writes its own replies without
// waiting for room in the socket (on Unix; elsewhere it leaves them to the
// session's writer goroutine). A Transport from New has no tuned
// connection under it, and its writes go out one by one.
//
// # Closing after an abort
//
// A peer may still be writing a large frame when the server aborts its
// session. Closing a socket with bytes unread resets the connection, and
// the peer's write then fails with "connection reset" before it has read
// the abort. A tuned connection whose session aborted therefore ends its
// own side first (FIN) and reads and discards what the peer still sends
// until the peer closes, for [TuneOptions.Linger] and
// [TuneOptions.LingerBytes] at most, then closes. An ordinary close does
// not linger.
package wsconn
