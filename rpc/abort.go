package rpc

import (
	"errors"
	"fmt"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/rpc/capnweb"
)

// abortReason is what a script's calls fail with once its session ended
// for a limit: the script may catch the first such error and call again
// in the moment before its process is stopped, and each call then fails
// with limit_exceeded, the code every other limit's error has, rather than
// a bare Error.
func abortReason(reason error) error {
	if !errors.Is(reason, capnweb.ErrLimit) {
		return reason
	}
	props := map[string]any{"code": string(errcode.LimitExceeded)}
	// The limit met, as a refused call's limit property holds it: a
	// memory budget names its bytes.
	var budget *capnweb.BudgetError
	if errors.As(reason, &budget) {
		props["limit"] = budget.Budget
	}
	return capnweb.Errorf(capnweb.NameRangeError, props,
		"the run went past a limit of its connection to the app and is ending: %s", capnweb.WireMessage(reason))
}

// oversizeReply is what a script's call fails with when the host's answer
// to it, a result or an error, would be a frame larger than the SDK's
// transport accepts (capnweb's default, DEFAULT_MAX_MESSAGE in
// transport.ts), which would end the script's connection: the call fails
// with limit_exceeded, and the script goes on.
func oversizeReply(size, limit int) error {
	return capnweb.Errorf(capnweb.NameRangeError, map[string]any{"code": string(errcode.LimitExceeded), "limit": limit},
		"the app's answer to this call (%s) is larger than the connection to it carries (%s): ask for less, or page through it",
		mib(size), mib(limit))
}

// mib words n bytes in MiB for a person.
func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
