package cdp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/tranquil/automation/errcode"
)

// ConsoleHistory returns what the browser kept of the current document's
// console: its console messages, as [Tab.OnConsole] gives them, and its
// uncaught exceptions and unhandled rejections, as [Tab.OnPageError] gives
// them, including those from before the tab was attached. Enabling the
// Runtime domain on a new session makes the browser replay them before it
// answers, so a short second session reads the whole history without
// touching the tab's own. Nothing runs in the page.
func (t *Tab) ConsoleHistory(ctx context.Context) ([]ConsoleMessage, []*EvalError, error) {
	b := t.b
	r, err := b.c.Target.AttachToTarget(ctx, target.NewAttachToTargetArgs(target.ID(t.id)).SetFlatten(true))
	if err != nil {
		return nil, nil, b.fail(err)
	}
	var mu sync.Mutex
	var console []ConsoleMessage
	var exceptions []*EvalError
	observe := func(method string, params json.RawMessage) {
		m, isMsg := consoleMessageOf(method, params)
		e := pageErrorOf(method, params)
		mu.Lock()
		defer mu.Unlock()
		if isMsg {
			console = append(console, m)
		}
		if e != nil {
			exceptions = append(exceptions, e)
		}
	}
	conn, rt, err := b.m.open(ctx, string(r.SessionID), observe)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = b.c.Target.DetachFromTarget(dctx, target.NewDetachFromTargetArgs().SetSessionID(r.SessionID))
		b.m.drop(rt, &DetachedError{TargetID: t.id, Reason: ErrDetached, Detail: "detached by client"})
		<-conn.Context().Done()
	}()
	if err := devtools.NewClient(conn).Runtime.Enable(ctx); err != nil {
		return nil, nil, t.fail(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return console, exceptions, nil
}

// Reload loads the tab's document again and returns its [Response], as
// [Tab.Goto] does: it waits for waitUntil (zero means Load) and follows
// the page if it sends itself on while it loads. The address is checked
// as a goto's is, and against the tab's sites. It is a page action,
// logged as a reload with the site reloaded.
func (t *Tab) Reload(ctx context.Context, waitUntil WaitUntil) (*Response, error) {
	return t.traverse(ctx, "reload", 0, waitUntil)
}

// GoBack goes one entry back in the tab's history, as the browser's back
// button does, and returns the [Response] of the document it shows then,
// as [Tab.Goto] does; nil, with no error, when there is no entry before
// the current one. A document the browser kept (its back-forward cache)
// comes back without a request; its response is the one it came with.
func (t *Tab) GoBack(ctx context.Context, waitUntil WaitUntil) (*Response, error) {
	return t.traverse(ctx, "goBack", -1, waitUntil)
}

// GoForward goes one entry forward in the tab's history; nil, with no
// error, when there is none. See [Tab.GoBack].
func (t *Tab) GoForward(ctx context.Context, waitUntil WaitUntil) (*Response, error) {
	return t.traverse(ctx, "goForward", +1, waitUntil)
}

// traverse reloads (step 0) or moves step entries through the history,
// as the page action method.
func (t *Tab) traverse(ctx context.Context, method string, step int, waitUntil WaitUntil) (*Response, error) {
	name, err := waitUntil.lifecycleName()
	if err != nil {
		return nil, err
	}
	var resp *Response
	err = t.act(ctx, method, "", false, func(ctx context.Context) error {
		h, err := t.c.Page.GetNavigationHistory(ctx)
		if err != nil {
			return t.fail(err)
		}
		i := h.CurrentIndex + step
		if i < 0 || i >= len(h.Entries) {
			return nil // nothing there: not an error, as in Playwright
		}
		to := h.Entries[i].URL
		if s := scopeOf(ctx); s != nil {
			s.site = hostOf(to)
		}
		if err := t.checkDestination(ctx, to); err != nil {
			return err
		}
		send := func(ctx context.Context) error {
			if step == 0 {
				return t.c.Page.Reload(ctx, page.NewReloadArgs())
			}
			return t.c.Page.NavigateToHistoryEntry(ctx, page.NewNavigateToHistoryEntryArgs(h.Entries[i].ID))
		}
		resp, err = t.renavigate(ctx, to, name, send)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// checkDestination refuses a reload or history move to an address a goto
// could not open, or outside the tab's sites: a document the browser kept
// comes back without a request, so the page policy would not see it.
func (t *Tab) checkDestination(ctx context.Context, to string) error {
	if err := CheckNavigation(to); err != nil {
		return err
	}
	if to == "about:blank" {
		return nil
	}
	return t.checkSite(ctx, to)
}

// renavigate sends a navigation that names no address of its own (a
// reload, a move through the history) and waits as navigate does: for
// the document that commits after it (Page.frameNavigated names it), and
// for where the page sends itself on from there. A document the browser
// kept comes back loaded, and a move to an entry of the same document
// ends at once, with status 0.
func (t *Tab) renavigate(ctx context.Context, to, name string, send func(context.Context) error) (*Response, error) {
	release, err := t.watchResponses()
	if err != nil {
		return nil, err
	}
	defer release()
	fw := t.followNavigations()
	defer fw.stop()
	// The document left may still report lifecycle states (network idle
	// comes late), and one restored from the back-forward cache keeps its
	// old loader: only the commit tells which document the move shows.
	var committed string
	restored, sameDoc := false, false
	unsub := t.subscribe(func(method string, params json.RawMessage) {
		if method != "Page.frameNavigated" && method != "Page.navigatedWithinDocument" {
			return
		}
		var ev struct {
			FrameID string                                  `json:"frameId"`
			Frame   struct{ ID, ParentID, LoaderID string } `json:"frame"`
			Type    string                                  `json:"type"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		main := t.mainFrame()
		t.nav.mu.Lock()
		defer t.nav.mu.Unlock()
		switch {
		case committed != "" || sameDoc:
		case method == "Page.navigatedWithinDocument" && ev.FrameID == main:
			sameDoc = true
		case ev.Frame.ParentID == "" && ev.Frame.ID == main:
			committed, restored = ev.Frame.LoaderID, ev.Type == "BackForwardCacheRestore"
		}
		t.nav.broadcast()
	})
	defer unsub()
	if err := send(ctx); err != nil {
		return nil, t.fail(err)
	}
	final := ""
	if err := t.waitState(ctx, func() bool {
		switch {
		case restored:
			final = committed
			return true
		case committed != "":
			var ok bool
			final, ok = fw.settled(committed, name)
			return ok
		}
		return sameDoc
	}, "navigation to "+to); err != nil {
		return nil, fw.timedOut(err)
	}
	if sameDoc {
		return &Response{URL: t.nav.mainURL()}, nil
	}
	r, ok := t.responseOf(final)
	if !ok {
		r.URL = t.nav.mainURL()
	}
	if strings.HasPrefix(r.URL, "chrome-error:") {
		if rf, refused := t.refusedIn(""); refused {
			return nil, &NavigationBlockedError{URL: to, Reason: rf.reason}
		}
		return nil, codeErr(errcode.Navigation, "navigation to %s failed: it could not be loaded", shorten(to, 200))
	}
	return &r, nil
}
