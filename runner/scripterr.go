package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
)

// scriptMessage words a browser error for the script that made the call:
// what happened and what to do. cdp writes its messages for people, so
// this adds the advice that names the script's own knobs (its timeout,
// its sites=) and takes the message of the error that carries the code,
// leaving out whatever wrapped it on the way. code is the error's code.
func scriptMessage(err error, code errcode.Code) string {
	var se *cdp.SiteError
	var wt *cdp.WaitTimeoutError
	var coded errcode.Coder
	switch {
	case errors.As(err, &se):
		if se.Sites == nil {
			return fmt.Sprintf("%s refused: the document at %s is not a web page", se.Method, se.Site)
		}
		return fmt.Sprintf("%s refused on %s, which is not on this script's sites= (%s): add %s to sites= in its // @permissions line if it should act there, or check the tab's address",
			se.Method, se.Site, strings.Join(se.Sites, ", "), se.Site)
	case errors.As(err, &wt):
		if errors.Is(wt.Err, context.Canceled) {
			return wt.Error()
		}
		return wt.Error() + ": raise the call's timeout, or wait for what comes first"
	case code == errcode.Closed:
		return "the tab was closed, or its browser is gone: open the tab again"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled: the run is ending"
	case code == errcode.Timeout:
		// A bare deadline, of a wait cdp does not name.
		return "timed out: the call took longer than its timeout; raise it, or wait for the page first"
	case errors.As(err, &coded):
		return scrubEndpoints(coded.Error())
	}
	return scrubEndpoints(err.Error())
}
