package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/emulation"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/tranquil/automation/errcode"
)

// worldName is the isolated world the form runtime lives in. It shows by
// this name in DevTools' context picker.
const worldName = "tranquil-sdk"

const defaultCleanupTimeout = 5 * time.Second

// Tab is an attached page. Its identity is its target ID, which stays the
// same across navigations, cross-process ones included. A Tab is safe for
// concurrent use. Its events are handled on the session's receive goroutine
// inside the connection, which ends when the tab detaches or the browser
// connection is lost. Every goroutine it starts that outlives the call or
// event that started it (a dialog's answer, a frame's setup, a cleanup
// call) belongs to the tab's task group (tasks.go): Detach and Close end
// them and wait for them, for a bounded time. The timers that turn the
// Network domain off after gotos and log a dialog storm's dismissals are
// timers, not goroutines, until they fire.
type Tab struct {
	b       *Browser
	id      string
	session string
	conn    *rpcc.Conn
	route   *route
	c       *devtools.Client
	top     *session // the tab's own session: route, conn and c again
	opts    TabOptions

	*forms // locating elements and acting on them: forms.go and the files doc.go names

	evalGroups atomic.Uint64          // numbers the object groups of evaluations (see callIn)
	tasks      *taskGroup             // the goroutines the tab starts (tasks.go)
	capturing  chan struct{}          // held by the screenshot under way (screenshot.go)
	frameID    atomic.Pointer[string] // the main frame's id: see mainFrame

	// The tab's state, in parts that each guard their own fields with a
	// lock of their own. No part's lock is held while another's is taken,
	// so they have no order among them; each type says which goroutines
	// touch it.
	frames *frameTree  // frames, their realms and sessions: frametree.go
	nav    *navTracker // the main frame's documents and navigation waits: navstate.go
	dlg    dialogState // the dialog handler and what the page's dialogs did: dialogs.go
	sw     swState     // service worker registrations: serviceworkers.go
	net    netScope    // the Network domain's users: response.go
	local  localState  // local addresses: sockets.go, workers.go, openers.go
	subs   subscribers // event callbacks (subscribe)
}

// mainFrame is the main frame's id: the target's, unless setup finds the
// frame tree says otherwise before the tab is returned. Every part needs
// it, so it is under none of their locks.
func (t *Tab) mainFrame() string {
	if p := t.frameID.Load(); p != nil {
		return *p
	}
	return ""
}

func (t *Tab) setMainFrame(id string) { t.frameID.Store(&id) }

// TabOptions configures a tab session. The zero value lets page actions
// run in any http or https document (or a blank page) and logs nothing.
type TabOptions struct {
	// Sites, when non-nil, lists the hostnames (see [SiteAllowed]) a
	// document must be on for a page action to run in it. The check is made
	// for the realm the action actually runs in, from the origin the browser
	// reports for it, at the moment it runs.
	Sites []string
	// Log receives one Action per page action (evaluate, waitFor, holds,
	// screenshot, goto, form actions, key presses), per refusal, and per
	// document the main frame moved to other than by a goto ("navigated").
	// It runs on the calling goroutine, or on the connection's for
	// refusals and navigations; it must not block. Nil logs nothing.
	Log func(Action)
	// Gateway, when set, reports the requests its policy refused in this
	// tab's frames to Log, and keeps the tab, its pages' requests,
	// workers and WebSockets, and its popups off local addresses that
	// Sites does not name (see [PagePolicy.AllowLocal]).
	Gateway *Gateway
	// RefuseServiceWorkers unregisters every service worker registration
	// that appears, while the tab is attached, on a site the tab's
	// documents were on, and logs it ("serviceWorker", refused): such a
	// worker would otherwise answer that site's requests in every tab
	// from then on. Registrations that existed before are left alone;
	// Detach and Close look once more before the session ends. False
	// leaves service workers to the pages.
	RefuseServiceWorkers bool
	// Meter, when set, bounds the browser's replies to the tab's page
	// calls (evaluate, readers, waits, form actions) by what it has left,
	// and is charged for each while it is decoded (see [Meter]). Nil
	// bounds them by [Options.MaxMessageSize] alone.
	Meter Meter
	// Pacer, when set, gives each repeated check of a waiting call its
	// turn (see [Pacer]). Nil checks as often as the call's backoff says.
	Pacer Pacer
	// Popup, when set with a Gateway, attaches each page this tab's pages
	// open (a popup) as the caller's own guarded tab, and returns it; a
	// popup it cannot attach is closed. It is called before the popup
	// loads its first document, and not for a popup the tab may not load
	// (a local address its Sites do not name), which is closed at once.
	// Nil attaches popups with these options, detached with this tab.
	Popup func(ctx context.Context, targetID string) (*Tab, error)
}

// Attach attaches to a page target by ID with the zero [TabOptions].
func (b *Browser) Attach(ctx context.Context, targetID string) (*Tab, error) {
	return b.AttachWith(ctx, targetID, TabOptions{})
}

// AttachWith attaches to a page target by ID. Events start flowing at once;
// the tab tracks its documents and JavaScript realms from then on.
func (b *Browser) AttachWith(ctx context.Context, targetID string, opts TabOptions) (*Tab, error) {
	r, err := b.c.Target.AttachToTarget(ctx, target.NewAttachToTargetArgs(target.ID(targetID)).SetFlatten(true))
	if err != nil {
		if re := protocolError(err); re != nil {
			return nil, fmt.Errorf("cdp: attach %s: %s", targetID, re.Message)
		}
		return nil, b.fail(err)
	}
	t := &Tab{
		b: b, id: targetID, session: string(r.SessionID), opts: opts,
		top:       &session{id: string(r.SessionID), root: targetID},
		nav:       newNavTracker(),
		capturing: make(chan struct{}, 1), tasks: newTaskGroup(),
	}
	t.setMainFrame(targetID)
	t.frames = newFrameTree(t.top, targetID)
	t.forms = &forms{p: t}
	conn, rt, err := b.m.open(ctx, t.session, t.observe)
	if err != nil {
		return nil, err
	}
	t.conn, t.route, t.c = conn, rt, devtools.NewClient(conn)
	t.top.conn, t.top.route, t.top.c = conn, rt, t.c
	// Once the session has ended, what the tab's goroutines would still
	// do has no session to do it on.
	t.tasks.Go("session watch", func(ctx context.Context) {
		select {
		case <-t.route.gone:
		case <-ctx.Done():
		}
		t.tasks.cancel()
	})
	if err := t.setup(ctx); err != nil {
		t.detach()
		_ = t.tasks.stop(ctx)
		return nil, err
	}
	if opts.RefuseServiceWorkers {
		if err := t.watchServiceWorkers(ctx); err != nil {
			t.detach()
			_ = t.tasks.stop(ctx)
			return nil, t.fail(err)
		}
	}
	if opts.Gateway != nil {
		opts.Gateway.watch(t)
		// Ends with the session, which ends before the group stops.
		t.tasks.Go("gateway watch", func(context.Context) {
			<-t.route.gone
			opts.Gateway.unwatch(t)
		})
	}
	return t, nil
}

// setup enables the domains the tab relies on. Their replays (contexts,
// current lifecycle) arrive through observe.
func (t *Tab) setup(ctx context.Context) error {
	// Every call goes out at once, since each round trip counts while a
	// browser is still starting. The main frame's id is the target id, so
	// the frame tree is not needed before the world is made; it only fills
	// in the loader when no lifecycle event has done so yet.
	var tree *page.GetFrameTreeReply
	calls := []func() error{
		func() (err error) { tree, err = t.c.Page.GetFrameTree(ctx); return err },
		func() error { return t.c.Page.Enable(ctx) },
		func() error {
			return t.c.Page.SetLifecycleEventsEnabled(ctx, page.NewSetLifecycleEventsEnabledArgs(true))
		},
		func() error { return t.c.Runtime.Enable(ctx) },
		func() error { return worldOnNewDocuments(ctx, t.c) },
		// Cross-site frames are targets of their own (frames.go).
		func() error { return autoAttach(ctx, t.c) },
		func() error { return t.guardSockets(ctx) },
		func() error {
			// Keeps background tabs behaving as focused for input and timers.
			return t.c.Emulation.SetFocusEmulationEnabled(ctx, emulation.NewSetFocusEmulationEnabledArgs(true))
		},
		func() error {
			// The current document predates the script above; give it the
			// world now. A navigation racing this is harmless: the new
			// document gets the world from the script.
			return t.isolatedWorld(ctx, t.id)
		},
	}
	if first := all(calls); first != nil {
		return t.fail(first)
	}
	main := tree.FrameTree.Frame
	frame := string(main.ID)
	t.nav.attached(string(main.LoaderID), frameURL(main.URL, main.URLFragment))
	other := frame != t.mainFrame()
	t.setMainFrame(frame)
	// Frames the renderer made before attach: their realms are replayed,
	// their addresses are not.
	var before []frameSeen
	var walk func(fs []page.FrameTree)
	walk = func(fs []page.FrameTree) {
		for _, c := range fs {
			before = append(before, frameSeen{id: string(c.Frame.ID), url: frameURL(c.Frame.URL, c.Frame.URLFragment), name: derefString(c.Frame.Name)})
			walk(c.ChildFrames)
		}
	}
	walk(tree.FrameTree.ChildFrames)
	t.frames.setMain(frame, before)
	if other {
		return t.isolatedWorld(ctx, frame)
	}
	return nil
}

// worldOnNewDocuments has Chromium build the form runtime's world in
// every new document of a session itself.
func worldOnNewDocuments(ctx context.Context, c *devtools.Client) error {
	_, err := c.Page.AddScriptToEvaluateOnNewDocument(ctx,
		page.NewAddScriptToEvaluateOnNewDocumentArgs("//# sourceURL=tranquil-sdk").SetWorldName(worldName))
	return err
}

// all runs calls at once, since each round trip counts, and returns the
// first error.
func all(calls []func() error) error {
	errs := make(chan error, len(calls))
	for _, f := range calls {
		go func() { errs <- f() }()
	}
	var first error
	for range calls {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// isolatedWorld creates the form runtime's world in a frame's current
// document on the tab's own session.
func (t *Tab) isolatedWorld(ctx context.Context, frame string) error {
	return t.isolatedWorldOn(ctx, t.top, frame)
}

// ID is the tab's target ID.
func (t *Tab) ID() string { return t.id }

// Client is the tab session's protocol client (github.com/mafredri/cdp), for calls this package does
// not wrap. Events of the session can be subscribed to on it as usual.
func (t *Tab) Client() *devtools.Client { return t.c }

// Done is closed when the tab's session has ended.
func (t *Tab) Done() <-chan struct{} { return t.route.gone }

// Err reports why the session ended (a *DetachedError), or nil while it is
// attached.
func (t *Tab) Err() error {
	select {
	case <-t.route.gone:
		return t.route.err
	default:
		return nil
	}
}

// fail maps an error from a protocol call: once the session has ended, the
// *DetachedError explains it better than rpcc's wording.
func (t *Tab) fail(err error) error {
	if err == nil {
		return nil
	}
	select {
	case <-t.route.gone:
		return t.route.err
	default:
	}
	if errors.Is(err, ErrDetached) || errors.Is(err, ErrMessageTooLarge) {
		var de *DetachedError
		if errors.As(err, &de) {
			return de
		}
		return err
	}
	if re := protocolError(err); re != nil {
		if sessionGone(re) {
			return t.goneWhile(re)
		}
		return codeErr(errcode.Error, "the browser refused the call: %s", re.Message)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &WaitTimeoutError{What: "the browser to answer", Err: err}
	}
	return codeErr(errcode.Error, "%w", err)
}

// Detach ends the session, leaving the page open. It is idempotent.
//
// A page whose document a navigation replaced while one of its dialogs
// was showing leaves the browser with that dialog and no way to answer
// it (Page.handleJavaScriptDialog says "Not attached to an active page").
// Chromium 156 then aborts the whole browser (bad_variant_access) as soon
// as the session's Page domain is turned off: by Target.detachFromTarget,
// Page.disable, or the connection closing. So for such a page Detach only
// stops listening here and sends nothing; the browser keeps the session
// until the page closes ([Tab.Close] and Target.closeTarget are safe) or
// the connection ends.
func (t *Tab) Detach(ctx context.Context) error {
	select {
	case <-t.route.gone:
		return nil
	default:
	}
	if t.strandedDialog() {
		t.detach()
		return t.tasks.stop(ctx)
	}
	t.sweepServiceWorkers(ctx)
	err := t.b.c.Target.DetachFromTarget(ctx, target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(t.session)))
	t.detach()
	left := t.tasks.stop(ctx)
	if err != nil && protocolError(err) == nil {
		return t.b.fail(err)
	}
	return left
}

func (t *Tab) detach() {
	t.b.m.drop(t.route, &DetachedError{TargetID: t.id, Reason: ErrDetached, Detail: "detached by client"})
	<-t.conn.Context().Done()
}

// Close closes the page and returns once its session has ended. A page
// whose session already ended (a crash) is still closed; a page already
// gone reports why its session ended.
func (t *Tab) Close(ctx context.Context) error {
	t.sweepServiceWorkers(ctx)
	// The browser accepts a close and then drops it when the page is
	// between documents (a navigation the page policy refused leaves it
	// there for a while): the close is asked again until the session ends.
	if _, err := t.b.c.Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(t.id))); err != nil {
		if e := t.Err(); e != nil {
			_ = t.tasks.stop(ctx)
			return e
		}
		return t.b.fail(err)
	}
	for again := closeRetryFirst; ; again = min(2*again, closeRetryMax) {
		retry := time.NewTimer(again)
		select {
		case <-t.route.gone:
			retry.Stop()
			return t.tasks.stop(ctx)
		case <-ctx.Done():
			retry.Stop()
			t.detach()
			_ = t.tasks.stop(ctx)
			return ctx.Err()
		case <-retry.C:
			// A repeat that fails found the page closing or gone: its
			// session's end says which.
			_, _ = t.b.c.Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(t.id)))
		}
	}
}

// closeRetryFirst and closeRetryMax space the repeats of a close the
// browser dropped (Tab.Close).
const (
	closeRetryFirst = 250 * time.Millisecond
	closeRetryMax   = 2 * time.Second
)

// observe runs on the session's receive goroutine for every event. It
// tracks realms and documents and feeds subscribers; it never blocks.
func (t *Tab) observe(method string, params json.RawMessage) {
	t.observeExt(method, params)
	t.observeFrames(t.top, method, params)
	switch method {
	case "Page.lifecycleEvent":
		var ev struct {
			FrameID  string `json:"frameId"`
			LoaderID string `json:"loaderId"`
			Name     string `json:"name"`
		}
		if json.Unmarshal(params, &ev) != nil {
			break
		}
		if ev.FrameID == t.mainFrame() {
			t.nav.lifecycleSeen(ev.LoaderID, ev.Name)
		}
	}
	for _, f := range t.subs.all() {
		f(method, params)
	}
}

func frameURL(u string, fragment *string) string {
	if fragment != nil {
		return u + *fragment
	}
	return u
}

// refuseDocument takes a document the page policy does not allow (one that
// committed without a request the gateway could stop, such as a history
// entry of chrome: or data:) off the frame and logs the refusal. It runs on
// the receive goroutine, so the navigation goes out on its own.
func (t *Tab) refuseDocument(s *session, frame, u string) {
	t.logRefusal("navigate", u, "navigation_blocked")
	t.tasks.Go("refuse document", func(ctx context.Context) {
		ctx, cancel := cleanup(ctx)
		defer cancel()
		_, _ = s.c.Page.Navigate(ctx, page.NewNavigateArgs("about:blank").SetFrameID(page.FrameID(frame)))
	})
}

// requestRefused is the gateway's report of a request it failed; the tab
// logs those of its own frames.
func (t *Tab) requestRefused(frame, u, resourceType, reason string) {
	if !t.frames.has(frame, false) {
		return
	}
	method := "request"
	if resourceType == "Document" {
		method = "navigate"
	}
	t.logRefusal(method, u, "navigation_blocked")
}

func (t *Tab) logRefusal(method, u, outcome string) {
	if t.opts.Log == nil {
		return
	}
	t.opts.Log(Action{Method: method, Target: navigationTarget(u), Site: hostOf(u), Outcome: outcome})
}

// addressOf describes an address for the log without its path or query,
// which may carry what the page typed.
func addressOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "(malformed address)"
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

// subscribe adds an event callback; the returned func removes it.
func (t *Tab) subscribe(f func(string, json.RawMessage)) func() { return t.subs.add(f) }

// subscribers are a tab's event callbacks. They share no state with the
// rest of the tab, so they have their own lock: observe reads them for
// every event.
type subscribers struct {
	mu   sync.Mutex
	next int
	fs   map[int]func(method string, params json.RawMessage)
}

// add adds f; the returned func removes it.
func (s *subscribers) add(f func(string, json.RawMessage)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fs == nil {
		s.fs = map[int]func(string, json.RawMessage){}
	}
	id := s.next
	s.next++
	s.fs[id] = f
	return func() {
		s.mu.Lock()
		delete(s.fs, id)
		s.mu.Unlock()
	}
}

// all is the callbacks now, to call without the lock.
func (s *subscribers) all() []func(string, json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]func(string, json.RawMessage), 0, len(s.fs))
	for _, f := range s.fs {
		out = append(out, f)
	}
	return out
}

// ConsoleMessage is one console API call made by the page.
type ConsoleMessage struct {
	// Type is "log", "info", "warning", "error", "debug", …
	Type string
	// Text is the arguments rendered and joined with spaces.
	Text string
}

// OnConsole calls f for each console message of the page's main world. f
// runs on the session's receive goroutine: it must return quickly and must
// not call the tab. The returned func stops the calls. A message past 1 MiB
// is not read: f gets one saying how large it was.
func (t *Tab) OnConsole(f func(ConsoleMessage)) (stop func()) {
	return t.subscribe(func(method string, params json.RawMessage) {
		if m, ok := consoleMessageOf(method, params); ok {
			f(m)
		}
	})
}

// consoleMessageOf reads a Runtime.consoleAPICalled event.
func consoleMessageOf(method string, params json.RawMessage) (ConsoleMessage, bool) {
	if method != "Runtime.consoleAPICalled" {
		return ConsoleMessage{}, false
	}
	var ev runtime.ConsoleAPICalledReply
	if json.Unmarshal(params, &ev) != nil {
		return ConsoleMessage{}, false
	}
	parts := make([]string, 0, len(ev.Args))
	for _, a := range ev.Args {
		parts = append(parts, renderObject(a))
	}
	return ConsoleMessage{Type: ev.Type, Text: strings.Join(parts, " ")}, true
}

// OnPageError calls f for each uncaught exception or unhandled rejection in
// the page. The same rules as for OnConsole apply to f, and the same bound:
// an exception past 1 MiB arrives as one saying how large it was.
func (t *Tab) OnPageError(f func(*EvalError)) (stop func()) {
	return t.subscribe(func(method string, params json.RawMessage) {
		if e := pageErrorOf(method, params); e != nil {
			f(e)
		}
	})
}

// pageErrorOf reads a Runtime.exceptionThrown event; nil for any other.
func pageErrorOf(method string, params json.RawMessage) *EvalError {
	if method != "Runtime.exceptionThrown" {
		return nil
	}
	var ev struct {
		ExceptionDetails runtime.ExceptionDetails `json:"exceptionDetails"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return nil
	}
	return evalErrorOf(&ev.ExceptionDetails)
}

func renderObject(o runtime.RemoteObject) string {
	switch {
	case o.Type == "string" && len(o.Value) > 0:
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	case o.UnserializableValue != nil:
		return string(*o.UnserializableValue)
	case len(o.Value) > 0:
		return string(o.Value)
	case o.Description != nil:
		return *o.Description
	}
	return o.Type
}

// URL is the page's current address, read live from the browser.
func (t *Tab) URL(ctx context.Context) (string, error) {
	info, err := t.info(ctx)
	return info.URL, err
}

// Title is the page's current title: document.title, read in the page
// now ("" for a page without one). The browser's own copy, which its tab
// strip shows, follows the page a moment later and shows the address for
// an untitled page; it stands in only when the page cannot be read (a
// document outside the tab's sites, a page that is still starting).
//
// During a dialog storm (see [Tab.HandleDialogs]) the page runs no call,
// so the browser's copy answers at once.
func (t *Tab) Title(ctx context.Context) (string, error) {
	if t.inDialogStorm() {
		info, err := t.info(ctx)
		return info.Title, err
	}
	if v, err := t.call(ctx, sdkWorld, `() => document.title`, nil); err == nil {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, nil
		}
	} else if e := t.Err(); e != nil {
		return "", e
	}
	info, err := t.info(ctx)
	if t.localDocumentGrant(info.URL) != "" {
		return "", err // a local page's title is its own to tell (local.go)
	}
	return info.Title, err
}

func (t *Tab) info(ctx context.Context) (target.Info, error) {
	if err := t.Err(); err != nil {
		return target.Info{}, err
	}
	r, err := t.b.c.Target.GetTargetInfo(ctx, target.NewGetTargetInfoArgs().SetTargetID(target.ID(t.id)))
	if err != nil {
		if e := t.Err(); e != nil {
			return target.Info{}, e
		}
		return target.Info{}, t.b.fail(err)
	}
	return r.TargetInfo, nil
}

// NewTabWith is [Browser.NewTab] with the tab's options. The page opens
// blank and goes to url only once attached, as a page action of the new
// session: the wait then sees the navigation (created at url, the page
// could still show its initial blank document when NewTabWith returned),
// and the address is checked like any other (see [CheckNavigation]).
func (b *Browser) NewTabWith(ctx context.Context, url string, opts TabOptions) (*Tab, error) {
	if url != "" && url != "about:blank" {
		if err := CheckNavigation(url); err != nil {
			return nil, err
		}
	}
	r, err := b.c.Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
	if err != nil {
		if re := protocolError(err); re != nil && strings.Contains(strings.ToLower(re.Message), "not supported") {
			return nil, fmt.Errorf("%w: Target.createTarget: %s", ErrNotSupported, re.Message)
		}
		return nil, b.fail(err)
	}
	t, err := b.AttachWith(ctx, string(r.TargetID), opts)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_, _ = b.c.Target.CloseTarget(cctx, target.NewCloseTargetArgs(r.TargetID))
		return nil, err
	}
	if url != "" && url != "about:blank" {
		if _, err := t.Goto(ctx, url, Load); err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
			defer cancel()
			_ = t.Close(cctx)
			return nil, err
		}
	}
	return t, nil
}
