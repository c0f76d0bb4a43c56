package capnweb

import (
	"context"
	"time"
)

// Default limits, matching what the JavaScript implementation accepts.
const (
	DefaultMaxMessageSize  = 32 << 20
	DefaultMaxDepth        = 256
	DefaultMaxBigIntDigits = 16384
	DefaultMaxInFlight     = 1024
	DefaultMaxQueued       = 64 * DefaultMaxInFlight
)

// Options configures a [Session]. The zero value is ready to use.
type Options struct {
	// MaxMessageSize is the largest frame accepted from the peer, in bytes.
	// Zero means DefaultMaxMessageSize. A larger frame aborts the session.
	MaxMessageSize int
	// MaxDepth bounds how deeply values nest; a value at depth MaxDepth or
	// more aborts the session (received) or fails the send. Zero means
	// DefaultMaxDepth, which is also the most allowed.
	MaxDepth int
	// MaxBigIntDigits bounds the digits of a received bigint. Zero means
	// DefaultMaxBigIntDigits.
	MaxBigIntDigits int
	// MaxInFlight bounds the peer's calls running at once in this session.
	// Calls beyond it wait, in arrival order, until running ones finish, as
	// a JavaScript server would let a Promise.all of thousands run. Zero
	// means DefaultMaxInFlight.
	MaxInFlight int
	// MaxQueued bounds the calls waiting for MaxInFlight, which is what
	// protects memory from a peer that never stops calling: beyond it the
	// session aborts with ErrLimit. Zero means DefaultMaxQueued.
	MaxQueued int
	// OrderedObjects makes JavaScript objects reach Go code as *Object,
	// keys in the peer's order, wherever the Go side asks for any: method
	// parameters of type any, the arguments of a [Handler] or [Func], and
	// the results of [Stub.Await] and the calls built on it. Without it
	// they arrive as map[string]any, except in parameters of type [Value]
	// or [Object]. Objects are always sent in their order.
	OrderedObjects bool
	// MaxMemory is the session's memory budget in bytes: what the peer can
	// make it hold or build, counted as described at [Session.Memory].
	// Past it the session aborts with ErrLimit, naming what asked for
	// more. Zero means DefaultMaxMemory; a negative value means no budget,
	// for a peer that is trusted as much as the host itself.
	MaxMemory int64
	// OnPanic, if set, is told of a panic while the session handled the
	// peer's input (the session ends; the process goes on), with the
	// stack, for the host's own logs.
	OnPanic func(v any, stack []byte)
	// CloseTimeout bounds how long closing waits to flush the last frames.
	// Zero means 5 seconds.
	CloseTimeout time.Duration
	// CallContext, if set, sees the arguments of each call the peer makes
	// on a Go object before they are decoded, and returns the context the
	// method runs with (derived from ctx) and the arguments it gets: how a
	// host takes per-call metadata that its own client appends to the
	// arguments, so that no method's parameters change. It runs on the
	// call's goroutine; it must not block or keep args.
	CallContext func(ctx context.Context, args []any) (context.Context, []any)
	// PeerMaxMessageSize is the largest frame the peer accepts, in bytes.
	// A result or error of one of the peer's calls that would make a
	// larger frame is not sent, since the peer would end the session on
	// it: the call fails with OversizeReply's error instead, and the
	// session goes on. Zero means DefaultMaxMessageSize, what the
	// JavaScript implementation accepts; a negative value means no check.
	PeerMaxMessageSize int
	// OversizeReply, if set, words the error sent in place of such a
	// reply, of size bytes against the peer's limit. Without it, or when it
	// returns nil, the call fails with a RangeError whose size and limit
	// properties hold the two. It must not block. Only the returned
	// error's scalar properties (strings, numbers, booleans) are sent.
	OversizeReply func(size, limit int) error
	// AbortReason, if set, words the reason of an abort this session sends
	// the peer (for a limit, a protocol error, or [Session.Abort]): the
	// peer's every call fails with what it returns, so a host gives it the
	// fields its clients branch on. Without it the reason is sent as it is.
	// It must not block.
	AbortReason func(reason error) error
}

func (o *Options) maxDepth() int {
	if o.MaxDepth <= 0 || o.MaxDepth > DefaultMaxDepth {
		return DefaultMaxDepth
	}
	return o.MaxDepth
}

func (o *Options) maxMessage() int {
	if o.MaxMessageSize <= 0 {
		return DefaultMaxMessageSize
	}
	return o.MaxMessageSize
}

func (o *Options) peerMaxMessage() int {
	if o.PeerMaxMessageSize == 0 {
		return DefaultMaxMessageSize
	}
	return o.PeerMaxMessageSize
}

func (o *Options) maxBigDigits() int {
	if o.MaxBigIntDigits <= 0 {
		return DefaultMaxBigIntDigits
	}
	return o.MaxBigIntDigits
}

func (o *Options) maxInFlight() int {
	if o.MaxInFlight <= 0 {
		return DefaultMaxInFlight
	}
	return o.MaxInFlight
}

func (o *Options) maxQueued() int {
	if o.MaxQueued <= 0 {
		return DefaultMaxQueued
	}
	return o.MaxQueued
}

func (o *Options) maxMemory() int64 {
	switch {
	case o.MaxMemory == 0:
		return DefaultMaxMemory
	case o.MaxMemory < 0:
		return 0
	}
	return o.MaxMemory
}

func (o *Options) closeTimeout() time.Duration {
	if o.CloseTimeout <= 0 {
		return 5 * time.Second
	}
	return o.CloseTimeout
}
