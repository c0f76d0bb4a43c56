// Package capnweb implements the Cap'n Web RPC protocol, interoperable with
// the JavaScript implementation (npm capnweb 0.12).
//
// Entry points:
//
//   - [NewSession] starts a session over any [Transport], exporting a main
//     object; [Serve] runs one until it ends. Package rpc/wsconn provides
//     the WebSocket transport, server and client.
//   - [Session.Main] returns a [Stub] for the peer's main object; [Stub.Call],
//     [Stub.CallMethod], [Stub.Get] call through it, [Stub.Pipeline] pipelines
//     calls on results that have not arrived, [Stub.Map] runs .map() on the
//     peer.
//   - A transport may implement [IOBinder], [Batcher] and [NoWaitSender]
//     to spare the session work on every call.
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
// names such as __proto__ and constructor, and toJSON) are dropped as it
// drops them, both ways: a script that forwards JSON.parse of a page keeps
// its session, and the values never reach Go code.
//
// # Values and key order
//
// Objects keep their key order both ways, as JavaScript orders them
// (array-index keys first, then insertion order): [Object] is an object
// in order, [DecodeJSON] decodes a JSON document into Go values with
// *Object for its objects (Object's MarshalJSON writes them back in
// order), and a method may return either. Go code that passes page values
// on (an evaluate result, a row a reader scraped) should decode them with
// DecodeJSON and return what it got, rather than json.Unmarshal into an
// any, whose maps have no order.
//
// What Go code receives for an object depends on what it asks for, so
// that existing code that type-asserts map[string]any keeps working: a
// parameter of type any (and any inside a []any or map[string]any
// parameter), a [Handler] or [Func] argument, and the results of
// [Stub.Await] and the calls built on it get map[string]any; a parameter
// of type [Value] (or []Value, map[string]Value, …) gets *Object at every
// depth; a parameter of type *Object or Object gets that object in order.
// [Options.OrderedObjects] makes a whole session hand out *Object
// wherever it would hand out a map. Sending, a map's keys go out sorted
// (a Go map has no order), a struct's fields in declaration order.
//
// Nil slices and maps, whatever their type ([]float64, map[string]int,
// []byte…), go out empty ([], {}, an empty Uint8Array), as JavaScript code
// expects of a function that found nothing; a nil pointer goes out null.
//
// # Method results and stubs
//
// A Go method's result takes over the stubs in it, as a JavaScript
// method's result does: return a stub you obtained and the peer gets it,
// with nothing left exported once the peer is done. A stub the call got
// (an argument, a stub made from one, a stub in what a call made with the
// method's ctx returned) that the method released while it ran
// (defer p.Release()) may still be returned: such releases take effect
// once the result has been taken. A stub passed back
// to us arrives as the Go value we exported, in arguments and results
// alike. A stub received as an argument stays alive until the call is
// done with it, whatever the peer releases meanwhile.
//
// # Exporting Go values
//
// See [Session] for the rules that make a struct's methods callable, and
// [Handler] for objects resolved at call time. A callable value is never
// sent under the key "then", since JavaScript's await would call it.
//
// A blank field of type [Names] renames methods, so that a Go server can
// offer exactly the names a JavaScript one does ("lastCounterId" for
// LastCounterID).
//
// # Errors
//
// A Go error returned by a method reaches JavaScript as Error with the
// error's text. Return an [*Error] to choose the JavaScript name (TypeError,
// RangeError, …) and own properties such as code, or a [*RemoteError]
// with a Value to throw a value that is not an Error (throw 42). Rejections
// from the peer arrive as [*RemoteError]. Protocol violations abort the
// session with a clear message and an [*AbortError] wrapping [ErrProtocol]
// or [ErrLimit]. Calls beyond [Options.MaxInFlight] wait their turn; only
// a peer that outruns [Options.MaxQueued] as well is aborted.
//
// # What a peer may cost
//
// Every byte a peer can make the session hold or build counts against
// [Options.MaxMemory] (64 MiB by default), at the point it is made and
// before it is built: the values a frame parses into, the copies made to
// resolve its references ("import", "pipeline", .map() captures, nested
// references to earlier results), each push result until the peer
// releases it, the arguments Go code is handed while its call runs, and
// each .map() element's instructions. A reference counts as large as
// what it names, so a frame of a few dozen bytes that names a large value
// a thousand times is refused, not built: the session aborts with an
// [ErrLimit] error, a [*BudgetError], that says what asked for more and
// how much was left ([Session.Memory] shows the count);
// [Options.AbortReason] words what the peer is told. Measuring a value
// stops as soon as it is over, so a frame costs work in proportion to the
// budget at most.
// A panic while the session handles the peer's input, in the session's
// code or a method's, ends that session only ([Options.OnPanic] hears of
// it); no input can reach a Go fatal error: values nest at most
// [Options.MaxDepth] deep, counting through references.
//
// # Deliberate differences from the JavaScript implementation
//
// testdata/semantics.ts runs the same scenarios against a Go server and
// the JavaScript one (TestSemanticsDifferential). What still differs is
// meant to:
//
//   - Typed parameters refuse values of the wrong type with a TypeError
//     naming the argument (its argument property, from 1); JavaScript
//     methods take anything. The type is
//     the Go method's contract, and host code then needs no checks of its
//     own. An any parameter takes anything. A struct parameter ignores
//     keys it does not name, unless the object implements [StrictArgs]:
//     its methods then refuse them too, with a [*DecodeError] naming the
//     path (options.timeout), which the object words for the peer
//     ([DecodeError.Props] are its fields as an error's properties).
//   - Integers beyond ±(2⁵³−1) are not sent as numbers: JavaScript would
//     round them. Send a *big.Int, which arrives as a bigint.
//   - Streams (ReadableStream, WritableStream, Request, Response, Blob)
//     and the stream and pipe messages are refused with an abort that
//     names them: host capabilities need none, and each would need flow
//     control of its own.
//   - Thenables are refused: an object whose then is callable is never
//     sent, since await would call it, and Go methods named Then or
//     Dispose are never exposed.
//   - Stacks are never sent, so a Go server does not leak its paths.
//   - A Go map has no key order, so its keys go out sorted; send an
//     *Object to choose. A received error's props are a map
//     ([RemoteError.Props]), so their order is not kept.
//   - A Go method has no await. A call lets the next call on its object
//     start when it returns, when it waits on its ctx (a select on
//     ctx.Done(), a context derived from ctx, a call to the peer through a
//     [Stub]) or when it calls [Yield]. A method that computes, or blocks
//     without its ctx, for longer than a tenth of a second lets the next
//     call start anyway, where JavaScript would hold it back until the
//     method's first await.
//   - A numeric path part on an array is followed as an index: the client
//     sends api.list[1] as the string "1", which the JavaScript server
//     follows on objects only (it yields undefined); Go gives the element
//     the script asked for.
//   - A .map() result is sent whole, where the JavaScript server sends
//     promises inside it and resolves them later; the script sees the
//     same value.
//
// Not matched yet: a typed *T parameter takes our own object passed back
// in this session, but refuses a stub for it that arrives through another
// session (the peer re-exports it, and nothing on the wire says it is
// ours); JavaScript would call through it. Declare the parameter *Stub to
// accept both.
package capnweb
