// Package capnweb implements the Cap'n Web RPC protocol, interoperable with
// the JavaScript implementation (npm capnweb 0.12).
//
// Entry points:
//
//   - [NewSession] starts a session over any [Transport], exporting a main
//     object; [Serve] runs one until it ends.
//   - [AcceptWebSocket] accepts a WebSocket as a Transport with an explicit
//     read limit; [NewWebSocket] wraps a github.com/coder/websocket
//     connection you already have; [DialWebSocket] dials one.
//   - [Session.Main] returns a [Stub] for the peer's main object; [Stub.Call],
//     [Stub.CallMethod], [Stub.Get] call through it, [Stub.Pipeline] pipelines
//     calls on results that have not arrived, [Stub.Map] runs .map() on the
//     peer.
//   - [QuickAckListener] and [QuickAckConn] remove a 40 ms stall per
//     sequential call on Linux servers and let sessions batch their writes
//     (see below).
//
// # Protocol coverage
//
// All messages: push, pull, resolve, reject, release, abort. Stream and
// pipe messages are refused with an abort that names them. All value
// forms: escaped arrays, undefined, ±Infinity, NaN, bigint, Date, bytes
// (typed containers included), Error (name, message, props; stacks are
// never sent), URL, Headers, exports, promises, imports, pipelines and
// remap (.map()). An unknown form aborts the session with "unknown special
// value". Object keys that JavaScript silently drops (the Object.prototype
// names and toJSON) are refused: receiving one aborts, sending one fails the
// call. Object keys are sent in sorted order.
//
// # Exporting Go values
//
// See [Session] for the rules that make a struct's methods callable, and
// [Target] for objects resolved at call time. A callable value is never
// sent under the key "then", since JavaScript's await would call it.
//
// # Errors
//
// A Go error returned by a method reaches JavaScript as Error with the
// error's text. Return an [*Error] to choose the JavaScript name (TypeError,
// RangeError, …) and own properties such as code. Rejections from the peer
// arrive as [*RemoteError]. Protocol violations abort the session with a
// clear message and an [*AbortError] wrapping [ErrProtocol] or [ErrLimit].
//
// # The delayed-ACK stall
//
// Deno's WebSocket client leaves Nagle's algorithm on, and the JavaScript
// client sends small frames the server does not answer at once (pull,
// release). With Linux's delayed ACK every sequential call then waits about
// 40 ms. A Go server avoids it by re-arming TCP_QUICKACK after every read:
// serve HTTP on QuickAckListener(ln), or wrap connections with QuickAckConn
// before they reach the HTTP server. A server that runs its own handshake
// first accepts with AcceptWebSocket, reads and writes its frames on
// [WebSocket.Conn], then calls NewSession with the same WebSocket: the
// hijacked connection is the wrapped one, so the fix holds, and the session
// writes the frames it has queued with one system call. On other systems
// QUICKACK is a no-op, and the client must set TCP_NODELAY instead.
package capnweb
