package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
)

// What a script reads carries no Go or protocol wording, and says what
// to do.
func TestScriptMessageHidesGoWording(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"protocol call out of time": {
			fmt.Errorf("cdp.Input: DispatchMouseEvent: %w", context.DeadlineExceeded),
			"timed out: the call took longer than its timeout: pass a larger { timeout }, or wait for what comes before it first (tab.waitFor, tab.waitForNavigation)",
		},
		"wait": {
			&cdp.WaitTimeoutError{What: `selector "#x"`, Err: context.DeadlineExceeded},
			`timed out waiting for selector "#x": pass a larger { timeout }, or wait for what comes before it first (tab.waitFor, tab.waitForNavigation)`,
		},
		"wait that saw": {
			&cdp.WaitTimeoutError{What: `selector "#x"`, Err: context.DeadlineExceeded, Waited: 3 * time.Second, Seen: "no element matches it"},
			`waited 3 s for selector "#x"; last seen: no element matches it: pass a larger { timeout }, or wait for what comes before it first (tab.waitFor, tab.waitForNavigation)`,
		},
		"site": {
			&cdp.SiteError{Method: "fill", Site: "shop.example", Sites: []string{"pay.example"}},
			"fill refused on shop.example, which is not on this script's sites= (pay.example): add shop.example to sites= in its // @permissions line if it should act there, or check the tab's address",
		},
		"target": {
			&cdp.LocatorError{Code: "not_found", Target: `label "Email"`, Message: "no element matches", Waited: 300 * time.Millisecond},
			`waited 300 ms for label "Email": no element matches: check the target, or pass a larger { timeout } if it comes later`,
		},
		"connection failed": {
			fmt.Errorf("cdp.Runtime: CallFunctionOn: %w", errors.New("rpcc: the connection is closing: websocket: close 1006 (abnormal closure): unexpected EOF")),
			"the browser did not carry out the call: its connection failed; try again",
		},
		"navigation through a broken connection": {
			&cdp.LocatorError{Code: errcode.Navigation, Message: "read tcp 127.0.0.1:80: EOF"},
			"the page failed to load",
		},
		"browser gone": {
			fmt.Errorf("cdp.Input: DispatchKeyEvent: %w", cdp.ErrBrowserClosed),
			"the tab was closed, or its browser is gone: open the tab again",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := scriptMessage(tc.err, errcode.Of(tc.err))
			assert.Equal(t, tc.want, got)
			assert.False(t, goWording.MatchString(got), got)
			for _, bad := range []string{"cdp", "context deadline", "Dispatch"} {
				assert.NotContains(t, got, bad)
			}
		})
	}
}
