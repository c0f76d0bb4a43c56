package runner

import (
	"errors"

	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// DefaultSessionBudget is the memory budget of a run's session when
// [Config.SessionBudget] is zero: far above what a script that passes
// values to the host and reads pages needs, and small enough that
// MaxConcurrent runs together cannot take a desktop app down.
const DefaultSessionBudget = 64 << 20

// sessionLimitReason words why a run's session was ended for going past
// a limit, for the run's history entry and the host: the code first, then
// what asked for more, in capnweb's words without its prefixes.
func sessionLimitReason(err error) string {
	var ae *capnweb.AbortError
	if errors.As(err, &ae) {
		err = ae.Cause
	}
	return string(errcode.LimitExceeded) + ": the script's connection to the host went past a limit: " + capnweb.WireMessage(err)
}
