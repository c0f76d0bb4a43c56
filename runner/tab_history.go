package runner

import (
	"context"
	"errors"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/rpc/capnweb"
)

// The tab's history and page-level waits and checks: reload, goBack,
// goForward, waitForURL and expectPage, built as goto and expect are.

// Reload loads the tab's document again and returns its response, as
// Goto does.
func (a *tabAPI) Reload(ctx context.Context, id string, opts navigationOptions) (*cdp.Response, error) {
	return a.traverse(ctx, mTabReload, id, opts, (*cdp.Tab).Reload)
}

// GoBack goes one entry back in the tab's history and returns the
// response of the document shown then; null when there is none.
func (a *tabAPI) GoBack(ctx context.Context, id string, opts navigationOptions) (*cdp.Response, error) {
	return a.traverse(ctx, mTabGoBack, id, opts, (*cdp.Tab).GoBack)
}

// GoForward goes one entry forward; null when there is none.
func (a *tabAPI) GoForward(ctx context.Context, id string, opts navigationOptions) (*cdp.Response, error) {
	return a.traverse(ctx, mTabGoForward, id, opts, (*cdp.Tab).GoForward)
}

// traverse is a reload or a history move: a navigation as goto's, to an
// address the history holds.
func (a *tabAPI) traverse(ctx context.Context, mid methodID, id string, opts navigationOptions, move func(*cdp.Tab, context.Context, cdp.WaitUntil) (*cdp.Response, error)) (*cdp.Response, error) {
	resp, err := navigation(ctx, a.r, mid, id, opts, func(c *call, until cdp.WaitUntil) (*cdp.Response, error) {
		return move(c.tab, c.ctx, until)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// WaitForURL waits until the tab's address matches m, then for the
// document's load state as opts say; the timeout is a navigation's.
func (a *tabAPI) WaitForURL(ctx context.Context, id string, m urlMatch, opts navigationOptions) error {
	_, err := navigation(ctx, a.r, mTabWaitForURL, id, opts, func(c *call, until cdp.WaitUntil) (none, error) {
		// Compiled once the call passed the gate: a run that has ended
		// compiles nothing.
		p, err := m.compile()
		if err != nil {
			return none{}, err
		}
		err = c.tab.WaitForURL(c.ctx, p, until)
		if errors.Is(err, cdp.ErrTimeout) {
			err = codeErr(errcode.Timeout, capnweb.NameError, "%v", err)
		}
		return none{}, err
	})
	return err
}

// ExpectPage checks e, of the page's address or title, until it holds or
// its timeout (0: readWait) passes, as Expect does.
func (a *tabAPI) ExpectPage(ctx context.Context, id string, e expectation) error {
	const api = "tab.expectPage"
	ce, bad := e.cdp(api)
	_, err := invoke(ctx, a.r, mTabExpectPage, callReq{tab: id, timeout: e.Timeout, refused: bad}, func(c *call) (none, error) {
		if !ce.Kind.OfPage() {
			// After the gate, as every call's own checks are once they pass
			// the generic ones: a run that has ended hears that first.
			return none{}, codeErr(errcode.Invalid, capnweb.NameTypeError, "%s: %s is expected of an element: use tab.expect(target)", api, e.Kind)
		}
		return none{}, c.tab.ExpectPage(c.ctx, ce)
	})
	return err
}
