package cdp

import (
	"errors"
	"testing"
	"time"

	"github.com/mafredri/cdp/rpcc"
	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/errcode"
)

// A call on a tab that was closed while it ran can be answered "no such
// session" before the detach event arrives: the script sees a closed
// tab, with the session's own reason, not the browser's refusal.
func TestCallOnAGoneSessionIsClosed(t *testing.T) {
	answer := &rpcc.ResponseError{Code: -32001, Message: "Session with given id not found."}

	t.Run("no event", func(t *testing.T) {
		// The tab's own session lives on: the session gone was a frame's.
		tab := &Tab{route: &route{gone: make(chan struct{})}}
		start := time.Now()
		err := tab.fail(answer)
		assert.Equal(t, errcode.Error, errcode.Of(err), "%v", err)
		assert.Less(t, time.Since(start), 2*goneWait)
	})

	t.Run("event after the answer", func(t *testing.T) {
		r := &route{gone: make(chan struct{})}
		tab := &Tab{route: r}
		why := &DetachedError{TargetID: "T1", Reason: ErrTargetClosed}
		go func() {
			time.Sleep(goneWait / 5)
			r.end(why)
		}()
		err := tab.fail(answer)
		assert.True(t, errors.Is(err, ErrTargetClosed), "the session's own reason: %v", err)
		assert.Equal(t, errcode.Closed, errcode.Of(err))
	})

	t.Run("another refusal", func(t *testing.T) {
		tab := &Tab{route: &route{gone: make(chan struct{})}}
		err := tab.fail(&rpcc.ResponseError{Code: -32000, Message: "Cannot find context with specified id"})
		assert.Equal(t, errcode.Error, errcode.Of(err))
	})
}
