package cdp

import (
	"context"
	"fmt"

	"github.com/mafredri/cdp/protocol/page"

	"github.com/tranquil/automation/errcode"
)

// WaitUntil names the point in a page load a navigation waits for.
type WaitUntil string

// Load states.
const (
	// Load waits for the load event: the page and its subresources are in.
	Load WaitUntil = "load"
	// DOMContentLoaded waits for the document to be parsed.
	DOMContentLoaded WaitUntil = "domcontentloaded"
)

func (w WaitUntil) lifecycleName() (string, error) {
	switch w {
	case Load, "":
		return "load", nil
	case DOMContentLoaded:
		return "DOMContentLoaded", nil
	}
	return "", fmt.Errorf("cdp: unknown wait state %q (want %q or %q)", string(w), Load, DOMContentLoaded)
}

// Goto navigates the tab to url, waits until the new document reaches
// waitUntil (zero means Load) and returns the document's [Response]: its
// HTTP status and the address it came from after redirects. Lifecycle
// events are matched on the main frame and the navigation's own loader, so
// events of the previous document can't end the wait early. A
// same-document navigation (a #fragment) returns as soon as the browser
// reports it, with status 0. A failed navigation (bad address, refused
// connection) has code navigation; an HTTP error status is not a failure, even
// when the browser shows its own error page for an empty body.
//
// The status is read from the Network domain, which Goto turns on for the
// navigation and off again a few seconds after the last goto; a caller
// using that domain through [Tab.Client] should not rely on its state.
//
// Only http and https addresses and about:blank may be opened (see
// [CheckNavigation]); a request the page policy refuses ([Gateway]) is a
// *NavigationBlockedError too. Goto is a page action and is logged with the
// site it goes to.
func (t *Tab) Goto(ctx context.Context, url string, waitUntil WaitUntil) (*Response, error) {
	name, err := waitUntil.lifecycleName()
	if err != nil {
		return nil, err
	}
	var resp *Response
	err = t.act(ctx, "goto", navigationTarget(url), false, func(ctx context.Context) (err error) {
		if s := scopeOf(ctx); s != nil {
			s.site = hostOf(url)
		}
		if err := CheckNavigation(url); err != nil {
			return err
		}
		t.mu.Lock()
		t.ext.gotos++
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			t.ext.gotos--
			t.mu.Unlock()
		}()
		resp, err = t.navigate(ctx, url, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// errHTTPStatus is how Page.navigate reports an error status whose body
// is empty: the browser then shows its own error page, but the server did
// answer.
const errHTTPStatus = "net::ERR_HTTP_RESPONSE_CODE_FAILURE"

func (t *Tab) navigate(ctx context.Context, url, name string) (*Response, error) {
	release, err := t.watchResponses()
	if err != nil {
		return nil, err
	}
	defer release()
	stays := t.dialogStays()
	nav, err := t.c.Page.Navigate(ctx, page.NewNavigateArgs(url))
	if err != nil {
		return nil, t.fail(err)
	}
	loader := ""
	if nav.LoaderID != nil {
		loader = string(*nav.LoaderID)
	}
	if nav.ErrorText != nil && *nav.ErrorText != "" {
		if *nav.ErrorText == "net::ERR_BLOCKED_BY_CLIENT" {
			reason := "the page policy refused the request"
			if r, ok := t.refusedIn(""); ok {
				reason = r.reason
			}
			return nil, &NavigationBlockedError{URL: url, Reason: reason}
		}
		if *nav.ErrorText == "net::ERR_ABORTED" && t.dialogStays() > stays {
			return nil, codeErr(errcode.Navigation, "navigation to %s failed: the page asked to be kept (beforeunload) and the tab's dialog answer kept it (%s)", shorten(url, 200), *nav.ErrorText)
		}
		if _, answered := t.responseOf(loader); !answered || *nav.ErrorText != errHTTPStatus {
			return nil, codeErr(errcode.Navigation, "navigation to %s failed (%s)", shorten(url, 200), *nav.ErrorText)
		}
	}
	if loader == "" {
		return &Response{URL: url}, nil // same document: no new loader, no lifecycle
	}
	// Events that came before the reply are already recorded per loader,
	// so there is no window in which they could be missed.
	if err := t.waitState(ctx, func() bool { return t.nav.lifecycle[loader][name] }, "navigation to "+url); err != nil {
		return nil, err
	}
	r, ok := t.responseOf(loader)
	if !ok {
		t.mu.Lock()
		r.URL = t.url // no network response: a document the browser made
		t.mu.Unlock()
	}
	return &r, nil
}

// WaitForNavigation runs trigger (a click, a key press, a form submit; may
// be nil to just wait) and waits until the main frame has moved to a new
// document that reached waitUntil, or navigated within the document.
// Waiting starts before trigger runs, so a fast navigation is not missed.
func (t *Tab) WaitForNavigation(ctx context.Context, waitUntil WaitUntil, trigger func(context.Context) error) error {
	name, err := waitUntil.lifecycleName()
	if err != nil {
		return err
	}
	t.mu.Lock()
	start := t.nav.seq
	t.mu.Unlock()
	if trigger != nil {
		if err := trigger(ctx); err != nil {
			return err
		}
	}
	return t.waitNavigationSince(ctx, start, name)
}

// WaitNavigated waits until a navigation of the main frame that started
// after the latest page action began (or, when none has begun since
// attach, the next navigation) reaches waitUntil. It is how a script waits
// for the navigation its own click or key press caused, however fast that
// navigation was.
func (t *Tab) WaitNavigated(ctx context.Context, waitUntil WaitUntil) error {
	name, err := waitUntil.lifecycleName()
	if err != nil {
		return err
	}
	t.mu.Lock()
	start := t.nav.actionMark
	t.mu.Unlock()
	return t.waitNavigationSince(ctx, start, name)
}

// waitNavigationSince waits until the main frame has navigated since nav.seq
// was start and its current document reached the lifecycle state name.
func (t *Tab) waitNavigationSince(ctx context.Context, start int, name string) error {
	return t.waitState(ctx, func() bool {
		if t.nav.seq == start {
			return false
		}
		seen, newDoc := t.nav.lifecycle[t.nav.loader]
		// A same-document navigation bumps nav.seq without a new loader; the
		// current loader then has long passed its load states.
		return !newDoc || seen[name] || seen["load"]
	}, "navigation")
}

// waitState waits until ok (called with t.mu held) holds.
func (t *Tab) waitState(ctx context.Context, ok func() bool, what string) error {
	for {
		t.mu.Lock()
		done := ok()
		ch := t.changed
		t.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return &WaitTimeoutError{What: what, Err: ctx.Err()}
		case <-t.route.gone:
			return t.route.err
		}
	}
}

// navState is the main frame's document history as navigation waits need
// it. The tab's mu guards it.
type navState struct {
	loader     string                     // newest document's loader id
	seq        int                        // counts new documents and same-document navigations
	lifecycle  map[string]map[string]bool // loaderId → lifecycle names seen
	loaders    []string                   // insertion order of lifecycle, to bound it
	actionMark int                        // seq when the latest page action began
}

// lifecycleEvent records a Page.lifecycleEvent of the main frame; a loader
// not seen before is a new document.
func (n *navState) lifecycleEvent(loaderID, name string) {
	seen := n.lifecycle[loaderID]
	if seen == nil {
		seen = map[string]bool{}
		n.lifecycle[loaderID] = seen
		n.loaders = append(n.loaders, loaderID)
		if len(n.loaders) > 16 {
			delete(n.lifecycle, n.loaders[0])
			n.loaders = n.loaders[1:]
		}
		if loaderID != n.loader {
			n.loader = loaderID
			n.seq++
		}
	}
	seen[name] = true
}
