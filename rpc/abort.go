package rpc

import (
	"errors"

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
