package runner

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/rpc/capnweb"
)

// A request's timeout has one rule, the host's: 0 (or absent) is the
// call's default, any other value a positive, finite number of
// milliseconds; the rest is refused as invalid, a RangeError, naming the
// call.
func TestArgTimeoutRule(t *testing.T) {
	for _, ms := range []float64{0, 1, 0.5, 30_000} {
		assert.NoError(t, checkTimeout("tab.goto", ms), "%v", ms)
	}
	for _, ms := range []float64{-1, math.Inf(1), math.Inf(-1), math.NaN()} {
		err := checkTimeout("tab.goto", ms)
		var ce *capnweb.Error
		if assert.True(t, errors.As(err, &ce), "%v: %v", ms, err) {
			assert.Equal(t, capnweb.NameRangeError, ce.Name)
			assert.Equal(t, "invalid", ce.Props["code"])
			assert.Contains(t, ce.Message, "tab.goto: timeout must be a positive, finite number of milliseconds")
		}
	}
}
