package capnweb

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Errors returned by this package wrap one of these (or a
// [*RemoteError]), so callers can branch with [errors.Is] and [errors.As].
var (
	// ErrClosed reports use of a session after it ended, for any reason.
	ErrClosed = errors.New("capnweb: session closed")
	// ErrProtocol reports a peer message that breaks the protocol. The session
	// aborts when it sees one.
	ErrProtocol = errors.New("capnweb: protocol error")
	// ErrLimit reports a peer message or behaviour that exceeds a configured
	// limit. The session aborts when it sees one.
	ErrLimit = errors.New("capnweb: limit exceeded")
	// ErrUnsupported reports a value that has no Cap'n Web encoding, or a
	// protocol feature this implementation refuses (streams and pipes).
	ErrUnsupported = errors.New("capnweb: unsupported")
	// ErrReleased reports use of a [Stub] after [Stub.Release].
	ErrReleased = errors.New("capnweb: stub released")
	// ErrNotFound reports a method or property the target does not have.
	ErrNotFound = errors.New("capnweb: no such member")
)

// JavaScript error names a peer can reconstruct. Any other name arrives in
// JavaScript as a plain Error and loses the name.
const (
	NameError          = "Error"
	NameTypeError      = "TypeError"
	NameRangeError     = "RangeError"
	NameReferenceError = "ReferenceError"
	NameSyntaxError    = "SyntaxError"
	NameEvalError      = "EvalError"
	NameURIError       = "URIError"
	NameAggregateError = "AggregateError"
)

// Error is an error that a Go method returns to choose how it looks in
// JavaScript: the constructor Name (one of the Name constants; empty means
// "Error") and extra own properties such as "code" that scripts can branch on.
// Props values are encoded like any other result, so they may be strings,
// numbers, maps, slices and so on. Stacks are never sent.
type Error struct {
	Name    string
	Message string
	Props   map[string]any
	// Err is an optional cause kept for Go callers (errors.Unwrap); it is
	// not sent.
	Err error
}

// Error returns "Name: Message", as JavaScript prints an Error.
func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = NameError
	}
	return name + ": " + e.Message
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an [*Error] with the given JavaScript name and props and a
// formatted message.
func Errorf(name string, props map[string]any, format string, args ...any) *Error {
	return &Error{Name: name, Message: fmt.Sprintf(format, args...), Props: props}
}

// RemoteError is a rejection received from the peer: either a JavaScript
// Error (Name, Message, optional Stack and Props) or, when the peer threw a
// value that is not an Error, that value in Value with Name empty.
type RemoteError struct {
	Name    string
	Message string
	Stack   string
	Props   map[string]any
	// Value holds a thrown non-Error value (a string, a number, an object).
	Value any
	// IsError is false when the peer threw a non-Error value.
	IsError bool
}

// Error returns "Name: Message", or describes the thrown value.
func (e *RemoteError) Error() string {
	if !e.IsError {
		return fmt.Sprintf("capnweb: peer threw %s", describe(e.Value))
	}
	if e.Name == "" {
		return e.Message
	}
	return e.Name + ": " + e.Message
}

// AbortError is the reason a session ended because one side aborted it or
// the connection dropped. It wraps [ErrClosed]; Cause is the underlying
// reason (a [*RemoteError] for an abort message from the peer, a protocol or
// limit error for a local abort, a transport error for a disconnect).
type AbortError struct {
	// Remote is true when the peer sent the abort or closed the connection.
	Remote bool
	Cause  error
}

// Error says who aborted, and why.
func (e *AbortError) Error() string {
	if e.Remote {
		return "capnweb: session aborted by peer: " + e.Cause.Error()
	}
	return "capnweb: session aborted: " + e.Cause.Error()
}

// Unwrap returns ErrClosed and Cause, so that errors.Is finds either.
func (e *AbortError) Unwrap() []error { return []error{ErrClosed, e.Cause} }

func protoErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// typeErrorf is a protocol error that the peer sees as a TypeError, as the
// JavaScript implementation reports malformed values.
func typeErrorf(format string, args ...any) error {
	return &Error{Name: NameTypeError, Message: fmt.Sprintf(format, args...), Err: ErrProtocol}
}

func limitErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrLimit}, args...)...)
}

// BudgetError is the [ErrLimit] of something that would take a session past
// its memory budget ([Options.MaxMemory]): Budget is that budget in bytes,
// for a host that tells its peer which limit it met.
type BudgetError struct {
	Budget int64
	err    error
}

func (e *BudgetError) Error() string { return e.err.Error() }

// Unwrap returns the limit error, which wraps ErrLimit.
func (e *BudgetError) Unwrap() error { return e.err }

// budgetErrorf is limitErrorf for a session's memory budget.
func budgetErrorf(budget int64, format string, args ...any) error {
	return &BudgetError{Budget: budget, err: limitErrorf(format, args...)}
}

// WireMessage returns the text the peer is told for a local error: the
// message without this package's "capnweb: ..." prefixes, which mean nothing
// to a script. A transport that reports the reason of an abort in its own
// close (as a WebSocket close frame does) uses it too.
func WireMessage(err error) string {
	msg := err.Error()
	for _, s := range []error{ErrProtocol, ErrLimit, ErrUnsupported, ErrNotFound, ErrClosed, ErrReleased} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	return msg
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		return "null"
	case Undefined:
		return "undefined"
	}
	return fmt.Sprintf("%v", v)
}

// sentProp reports whether an error's own property k is sent: not one
// JavaScript rebuilds itself (name, message, stack) nor a reserved key.
func sentProp(k string) bool {
	return k != "name" && k != "message" && k != "stack" && !reservedKeys[k]
}
