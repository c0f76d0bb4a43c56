package runner

import (
	"context"
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
			"timed out: the call took longer than its timeout; raise it, or wait for the page first",
		},
		"wait": {
			&cdp.WaitTimeoutError{What: `selector "#x"`, Err: context.DeadlineExceeded},
			`timed out waiting for selector "#x": raise the call's timeout, or wait for what comes first`,
		},
		"site": {
			&cdp.SiteError{Method: "fill", Site: "shop.example", Sites: []string{"pay.example"}},
			"fill refused on shop.example, which is not on this script's sites= (pay.example): add shop.example to sites= in its // @permissions line if it should act there, or check the tab's address",
		},
		"target": {
			&cdp.LocatorError{Code: "not_found", Target: `label "Email"`, Message: "no element matches", Waited: 300 * time.Millisecond},
			`label "Email": no element matches (waited 300ms)`,
		},
		"browser gone": {
			fmt.Errorf("cdp.Input: DispatchKeyEvent: %w", cdp.ErrBrowserClosed),
			"the tab was closed, or its browser is gone: open the tab again",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := scriptMessage(tc.err, errcode.Of(tc.err))
			assert.Equal(t, tc.want, got)
			for _, bad := range []string{"cdp", "context deadline", "Dispatch"} {
				assert.NotContains(t, got, bad)
			}
		})
	}
}
