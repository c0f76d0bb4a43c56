package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tranquil/automation/cdp"
)

// CodeNotSerializable is the code of a tab.evaluate whose result cannot
// travel back as JSON: a DOM node, a window, a symbol, a circular object.
const CodeNotSerializable = cdp.CodeNotSerializable

// goPrefix matches the prefixes Go packages put on their errors
// ("cdp: ", "cdp.Input: DispatchMouseEvent: "): names a script author
// cannot act on.
var goPrefix = regexp.MustCompile(`\bcdp(?:\.[A-Za-z]+)?: (?:[A-Z][A-Za-z]+: )?`)

// scriptMessage words a browser error for the script that made the call:
// what happened and what to do, without Go's wording ("context deadline
// exceeded") or the protocol methods behind it. code is the error's code.
func scriptMessage(err error, code string) string {
	var se *cdp.SiteError
	var wt *cdp.WaitTimeoutError
	switch {
	case errors.As(err, &se):
		if se.Sites == nil {
			return fmt.Sprintf("%s refused: the document at %s is not a web page", se.Method, se.Site)
		}
		return fmt.Sprintf("%s refused on %s, which is not on this script's sites= (%s): add %s to sites= in its // @permissions line if it should act there, or check the tab's address",
			se.Method, se.Site, strings.Join(se.Sites, ", "), se.Site)
	case errors.As(err, &wt):
		if errors.Is(wt.Err, context.Canceled) {
			return fmt.Sprintf("stopped waiting for %s: the call was cancelled", wt.What)
		}
		return fmt.Sprintf("timed out waiting for %s: raise the call's timeout, or wait for what comes first", wt.What)
	}
	msg := goPrefix.ReplaceAllString(scrubEndpoints(err.Error()), "")
	switch {
	case code == CodeTimeout && !strings.Contains(msg, "(waited "):
		// A bare deadline names only Go's context or a protocol method.
		return "timed out: the call took longer than its timeout; raise it, or wait for the page first"
	case code == CodeClosed:
		return "the tab was closed, or its browser is gone: open the tab again"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled: the run is ending"
	}
	msg = strings.ReplaceAll(msg, "context deadline exceeded", "timed out")
	return strings.ReplaceAll(msg, "context canceled", "cancelled")
}

// unserializable reports the browser's refusal to return an evaluate
// result by value. cdp passes the browser's wording through, so the
// wording is what is matched.
func unserializable(err error) bool {
	var ee *cdp.EvalError
	if errors.As(err, &ee) {
		return false
	}
	m := err.Error()
	return strings.Contains(m, "Object reference chain is too long") || strings.Contains(m, "Object couldn't be returned by value")
}
