package permissions

import (
	"errors"
	"fmt"
)

// Kinds of header problems. A [*ParseError] wraps exactly one of them, so
// callers can branch with errors.Is.
var (
	// ErrNoHeader: the script has no @permissions line in its header.
	ErrNoHeader = errors.New("no @permissions header")
	// ErrSyntax: a malformed token, quote or directive.
	ErrSyntax = errors.New("header syntax")
	// ErrUnknownKey: a token that names no permission.
	ErrUnknownKey = errors.New("unknown permission")
	// ErrBadValue: a value a permission key does not accept.
	ErrBadValue = errors.New("invalid permission value")
	// ErrBlanketPath: a read or write grant that would cover the script's own
	// folder or one of its ancestors.
	ErrBlanketPath = errors.New("path grant too broad")
	// ErrReserved: an environment variable the runtime keeps for itself.
	ErrReserved = errors.New("reserved name")
	// ErrDuplicate: a directive given more than once.
	ErrDuplicate = errors.New("duplicate directive")
	// ErrTimeout: an @timeout that is not a duration within bounds or none.
	ErrTimeout = errors.New("invalid timeout")
)

// ParseError is a problem in a script's header, located precisely enough
// for an editor to underline it. Line and Column are 1-based; Column counts
// characters (runes), not bytes.
type ParseError struct {
	Line   int
	Column int
	Token  string // the offending token as written; empty for a missing header
	Msg    string // what is wrong and how to fix it
	Kind   error  // one of the Err… kinds above
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Unwrap returns the error's kind.
func (e *ParseError) Unwrap() error { return e.Kind }

// Errors the flag computer returns.
var (
	// ErrFlagConfig: the host passed an unusable FlagConfig.
	ErrFlagConfig = errors.New("permissions: invalid flag config")
	// ErrMachinery: a write grant overlaps the runtime's own files.
	ErrMachinery = errors.New("permissions: grant overlaps runtime files")
	// ErrDeniedEndpoint: a net grant names a DevTools endpoint the host drives.
	ErrDeniedEndpoint = errors.New("permissions: grant names a denied endpoint")
)
