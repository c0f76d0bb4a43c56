package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
// events of the previous document can't end the wait early. A page that
// sends itself on while it loads, its load event handlers included
// (location.replace, location.href =, location.assign, a <meta
// http-equiv=refresh> of at most a second), is followed: Goto waits for
// the document it settles on and returns that one's response, and fails
// with code navigation when that document could not be loaded. A
// navigation the page's code starts once the document has loaded is the
// page's own, not the goto's; so is a refresh of more than a second. A
// same-document navigation (a #fragment) returns as soon as the browser
// reports it, with status 0; the history API (pushState) moves no
// document, and the URL stays the one the document came from. A failed
// navigation (bad address, refused connection, a 204, a download) has
// code navigation; an HTTP error status is not a failure, even when the
// browser shows its own error page for an empty body (Goto then returns
// once that page commits).
//
// It is held to Playwright's page.goto on the same browser by the
// package's navigation differential test, which lists where the two
// differ on purpose: Playwright resolves at the first page where Goto
// follows one sent on by the load event or a refresh, and fails an error
// status with an empty body.
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
		t.nav.gotoUnderWay(1)
		defer t.nav.gotoUnderWay(-1)
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
	// Watched before the navigation is sent: the page may send itself on
	// before Page.navigate answers.
	fw := t.followNavigations()
	defer fw.stop()
	stays := t.dialogStays()
	t.forgetRefusals("") // what the goto reports refused is what it caused
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
			blocked := &NavigationBlockedError{URL: url, Reason: "the page policy refused the request"}
			if r, ok := t.refusedIn(""); ok {
				// The request refused, which after a redirect is not url.
				blocked.URL, blocked.Reason = r.url, r.reason
			}
			return nil, blocked
		}
		if *nav.ErrorText == "net::ERR_ABORTED" && t.dialogStays() > stays {
			return nil, codeErr(errcode.Navigation, "navigation to %s failed: the page asked to be kept (beforeunload) and the tab's dialog answer kept it (%s)", shorten(url, 200), *nav.ErrorText)
		}
		if *nav.ErrorText == "net::ERR_ABORTED" {
			if err := fw.noPage(ctx, url, loader); err != nil {
				return nil, err
			}
		}
		if _, answered := t.responseOf(loader); !answered || *nav.ErrorText != errHTTPStatus {
			return nil, codeErr(errcode.Navigation, "navigation to %s failed (%s)", shorten(url, 200), *nav.ErrorText)
		}
	}
	if loader == "" {
		return &Response{URL: url}, nil // same document: no new loader, no lifecycle
	}
	if nav.ErrorText != nil && *nav.ErrorText == errHTTPStatus {
		// The server answered with an error status and no body: the page
		// is the browser's own, with nothing of the server's to load or
		// send the tab on. Waiting for its commit (not its load) keeps
		// that commit the goto's.
		if err := t.waitState(ctx, func() bool { return slices.Contains(fw.commits, loader) }, "navigation to "+url); err != nil {
			return nil, err
		}
		r, _ := t.responseOf(loader)
		return &r, nil
	}
	// Events that came before the reply are already recorded per loader,
	// so there is no window in which they could be missed.
	final := ""
	if err := t.waitState(ctx, func() bool {
		var ok bool
		final, ok = fw.settled(loader, name)
		return ok
	}, "navigation to "+url); err != nil {
		return nil, fw.timedOut(err)
	}
	r, ok := t.responseOf(final)
	if !ok {
		r.URL = t.nav.mainURL() // no network response: a document the browser made
	}
	if final != loader && strings.HasPrefix(r.URL, "chrome-error:") {
		// The page sent itself on to an address that did not load.
		to := fw.target()
		if rf, refused := t.refusedIn(""); refused {
			return nil, &NavigationBlockedError{URL: to, Reason: rf.reason}
		}
		return nil, codeErr(errcode.Navigation, "navigation to %s failed: the page sent itself on to %s, which could not be loaded", shorten(url, 200), shorten(to, 200))
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
	start, _ := t.nav.marks()
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
	_, start := t.nav.marks()
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

// waitState waits until ok (called with t.nav.mu held) holds. ok may read
// the navigation's state and what navigation waits keep under its lock.
func (t *Tab) waitState(ctx context.Context, ok func() bool, what string) error {
	for {
		t.nav.mu.Lock()
		done := ok()
		ch := t.nav.changed
		t.nav.mu.Unlock()
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

// navFollow watches the main frame while a goto waits, so that the goto
// ends at the document the page settles on: one that a script of the page
// (location.replace, location.href =, location.assign) or a
// <meta http-equiv=refresh> sent it on to during its load. Server
// redirects need none of this: they stay in the navigation's own loader.
// What the page's code starts once its document has loaded is its own
// doing, not part of the load; a refresh, which the browser schedules
// only then, is the exception.
//
// It records as events come, on the receive goroutine, what a goto's
// wait decides from: the waiter may look only after later events moved
// the frame on. Its fields are guarded by the tab's navTracker.mu.
type navFollow struct {
	t     *Tab
	unsub func()
	// commits are the main frame's documents, by loader, in the order
	// they committed; rests are the documents that stopped loading with
	// no navigation of the page's pending, in that order. The goto ends
	// at the first rest that committed at or after its own document.
	commits, rests []string
	// scheduled is a navigation the current document scheduled to start
	// at once (a script's location change, a refresh of at most a
	// second) that the browser has neither started nor cleared; starting
	// is one the browser started and has neither committed nor given up.
	// Either keeps the goto waiting.
	scheduled, starting bool
	// loadFired is set once the current document's load handlers ran
	// (Page.loadEventFired, in the task that ran them, so before any
	// timer they set); the load lifecycle event may come later.
	loadFired bool
	// to is the address of the latest navigation the page made.
	to string
	// download is the file name of a download the main frame began.
	download string
	// graceFor is the loaded document whose stopGrace runs on timer;
	// graceOver the one whose stopGrace has passed.
	graceFor, graceOver string
	timer               *time.Timer
}

// maxFollowed bounds the documents a goto follows the page through.
const maxFollowed = 64

// stopGrace is how long a document that reached load is given to say it
// stopped loading: a meta refresh is scheduled between the two. The
// browser says so within milliseconds; the bound only keeps a goto from
// waiting on a message that never comes.
const stopGrace = 250 * time.Millisecond

// maxFollowedDelay is the longest refresh a goto follows: the browser
// treats one of at most a second as a redirect, a longer one as the
// page's own (a dashboard that reloads every minute).
const maxFollowedDelay = 1.0

// followNavigations starts following the main frame's navigations; stop
// ends it.
func (t *Tab) followNavigations() *navFollow {
	fw := &navFollow{t: t}
	fw.unsub = t.subscribe(fw.observe)
	return fw
}

func (fw *navFollow) stop() {
	fw.unsub()
	fw.t.nav.mu.Lock()
	defer fw.t.nav.mu.Unlock()
	if fw.timer != nil {
		fw.timer.Stop()
	}
}

// observe sees the tab's events on its receive goroutine, after the tab
// recorded them.
func (fw *navFollow) observe(method string, params json.RawMessage) {
	switch method {
	case "Page.frameScheduledNavigation", "Page.frameClearedScheduledNavigation", "Page.frameRequestedNavigation",
		"Page.frameStartedNavigating", "Page.frameStoppedLoading", "Page.navigatedWithinDocument",
		"Page.lifecycleEvent", "Page.loadEventFired", "Page.downloadWillBegin":
	default:
		return
	}
	var ev struct {
		FrameID        string  `json:"frameId"`
		LoaderID       string  `json:"loaderId"`
		URL            string  `json:"url"`
		NavigationType string  `json:"navigationType"`
		Delay          float64 `json:"delay"`
		Name           string  `json:"name"`
		Disposition    string  `json:"disposition"`
		Reason         string  `json:"reason"`
		Filename       string  `json:"suggestedFilename"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	t := fw.t
	main := t.mainFrame()
	t.nav.mu.Lock()
	defer t.nav.mu.Unlock()
	if method == "Page.loadEventFired" { // the main frame's only: it names none
		fw.loadFired = true
		return
	}
	if ev.FrameID != main {
		return
	}
	loaded := fw.loadFired || t.nav.lifecycle[t.nav.loader]["load"]
	switch method {
	case "Page.frameScheduledNavigation":
		refresh := ev.Reason == "metaTagRefresh" || ev.Reason == "httpHeaderRefresh"
		if ev.Delay <= maxFollowedDelay && (!loaded || refresh) {
			fw.scheduled, fw.to = true, ev.URL
		}
	case "Page.frameClearedScheduledNavigation":
		fw.scheduled = false
	case "Page.frameRequestedNavigation":
		if (ev.Disposition == "" || ev.Disposition == "currentTab") && (!loaded || fw.scheduled) { // not a popup
			fw.starting, fw.to = true, ev.URL
		}
	case "Page.frameStartedNavigating":
		sameDoc := ev.NavigationType == "sameDocument" || ev.NavigationType == "historySameDocument"
		if !sameDoc && (!loaded || fw.scheduled || fw.starting) {
			fw.starting, fw.to = true, ev.URL
		}
		if !sameDoc {
			// Started, so no longer scheduled: the browser does not always
			// say it cleared it.
			fw.scheduled = false
		}
	case "Page.lifecycleEvent":
		if slices.Contains(fw.commits, ev.LoaderID) || len(fw.commits) >= maxFollowed {
			return
		}
		fw.commits = append(fw.commits, ev.LoaderID) // a new document committed
		// What the previous document had scheduled went with it.
		fw.starting, fw.scheduled, fw.loadFired = false, false, false
	case "Page.frameStoppedLoading":
		// The navigation that was starting came to nothing (a 204, a
		// download, an error the browser shows no page for), or the
		// document is done loading: it reached all it will reach.
		fw.starting = false
		if !fw.scheduled && len(fw.rests) < maxFollowed {
			fw.rests = append(fw.rests, t.nav.loader)
		}
	case "Page.navigatedWithinDocument":
		fw.starting = false
	case "Page.downloadWillBegin":
		fw.download = ev.Filename
	}
	t.nav.broadcast()
}

// noPage says why a navigation the browser aborted once the server had
// answered showed nothing: the answer was 204 or 205, or a download. The
// browser reports a download only after the abort: a 2xx answer is given
// stopGrace for it. It is nil when neither is known.
func (fw *navFollow) noPage(ctx context.Context, url, loader string) error {
	t := fw.t
	r, answered := t.responseOf(loader)
	switch {
	case !answered || r.Status < 200 || r.Status > 299:
		return nil
	case r.Status == 204 || r.Status == 205:
		return codeErr(errcode.Navigation, "navigation to %s failed: the server answered %d, with no page to show", shorten(url, 200), r.Status)
	}
	ctx, cancel := context.WithTimeout(ctx, stopGrace)
	defer cancel()
	if t.waitState(ctx, func() bool { return fw.download != "" }, "a download") != nil {
		return nil
	}
	t.nav.mu.Lock()
	defer t.nav.mu.Unlock()
	return codeErr(errcode.Navigation, "navigation to %s failed: the response is a download (%s), not a page", shorten(url, 200), shorten(fw.download, 100))
}

// settled reports whether the goto of loader has ended, waiting for the
// lifecycle state name, and at which document: the goto's own, or the
// last one the page sent itself on to before it settled. Call with the
// tab's nav.mu held.
func (fw *navFollow) settled(loader, name string) (string, bool) {
	t := fw.t
	i := slices.Index(fw.commits, loader)
	if i < 0 {
		return "", false // not committed yet
	}
	for _, r := range fw.rests {
		if slices.Contains(fw.commits[i:], r) {
			return r, true
		}
	}
	if fw.scheduled || fw.starting {
		return "", false
	}
	cur := t.nav.loader
	switch {
	case !t.nav.lifecycle[cur][name]:
		return "", false
	case name != "load" || fw.graceOver == cur:
		return cur, true
	case fw.graceFor != cur:
		// Loaded: give it stopGrace to say it stopped loading, in case
		// it schedules a refresh meanwhile.
		fw.graceFor = cur
		if fw.timer != nil {
			fw.timer.Stop()
		}
		fw.timer = time.AfterFunc(stopGrace, func() {
			t.nav.mu.Lock()
			defer t.nav.mu.Unlock()
			if fw.graceFor == cur {
				fw.graceOver = cur
			}
			t.nav.broadcast()
		})
	}
	return "", false
}

// target is the address the page last sent itself on to.
func (fw *navFollow) target() string {
	fw.t.nav.mu.Lock()
	defer fw.t.nav.mu.Unlock()
	return fw.to
}

// timedOut says, in a goto's timeout, where the page was going when it
// sent itself on and never settled.
func (fw *navFollow) timedOut(err error) error {
	var we *WaitTimeoutError
	to := fw.target()
	if !errors.As(err, &we) || to == "" {
		return err
	}
	cp := *we
	cp.Seen = "the page sent itself on to " + shorten(to, 200) + ", which had not settled"
	return &cp
}
