package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
)

// Defaults for browser work.
const (
	DefaultMaxBackgroundTabs = 4
	DefaultMaxForegroundTabs = 4
	defaultTabWait           = 30 * time.Second
)

// Error codes scripts receive on the code property of errors from browser
// calls: the one table in package cdp (see [cdp.Codes]), named here too.
const (
	CodeNotCommitted      = cdp.CodeNotCommitted
	CodeStaleRef          = cdp.CodeStaleRef
	CodeNotGranted        = cdp.CodeNotGranted
	CodeSiteNotAllowed    = cdp.CodeSiteNotAllowed
	CodeTimeout           = cdp.CodeTimeout
	CodeNavigation        = cdp.CodeNavigation
	CodeNotFound          = cdp.CodeNotFound
	CodeClosed            = cdp.CodeClosed
	CodeAmbiguous         = cdp.CodeAmbiguous
	CodeObscured          = cdp.CodeObscured
	CodeEvalError         = cdp.CodeEvalError
	CodeInvalid           = cdp.CodeInvalid
	CodeNavigationBlocked = cdp.CodeNavigationBlocked
	CodeBadTarget         = cdp.CodeBadTarget
	CodeHidden            = cdp.CodeHidden
	CodeDisabled          = cdp.CodeDisabled
	CodeNoOption          = cdp.CodeNoOption
	CodeReadonly          = cdp.CodeReadonly
	CodeNotStable         = cdp.CodeNotStable
	CodeMissingPart       = cdp.CodeMissingPart
)

// browsers shares one CDP connection per endpoint among all runs, and one
// page gateway per connection, host-given connections included.
type browsers struct {
	mu       sync.Mutex
	conns    map[string]*cdp.Browser
	gateways map[*cdp.Browser]*cdp.Gateway
}

// errBrowserUnreachable is what a run is told when the runner cannot
// connect to the browser of a tab: its endpoint, which cdp's errors name,
// is the host's and is logged only.
var errBrowserUnreachable = fmt.Errorf("%w: cannot connect to the tab's browser", cdp.ErrBrowserClosed)

func (b *browsers) get(ctx context.Context, log *slog.Logger, endpoint string) (*cdp.Browser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.conns[endpoint]; c != nil && c.Err() == nil {
		return c, nil
	}
	c, err := cdp.Connect(ctx, endpoint, nil)
	if err != nil {
		log.Warn("runner: connecting to a tab's browser", "error", err)
		return nil, errBrowserUnreachable
	}
	if b.conns == nil {
		b.conns = map[string]*cdp.Browser{}
	}
	b.conns[endpoint] = c
	return c, nil
}

// gateway returns the page gateway of c, starting it on first use: no tab
// of a run is driven before its browser enforces the page policy.
func (b *browsers) gateway(ctx context.Context, c *cdp.Browser, policy cdp.PagePolicy) (*cdp.Gateway, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g := b.gateways[c]; g != nil && c.Err() == nil {
		return g, nil
	}
	g, err := cdp.Guard(ctx, c, policy)
	if err != nil {
		return nil, err
	}
	if b.gateways == nil {
		b.gateways = map[*cdp.Browser]*cdp.Gateway{}
	}
	for old := range b.gateways {
		if old.Err() != nil {
			b.gateways[old].Close()
			delete(b.gateways, old)
		}
	}
	b.gateways[c] = g
	return g, nil
}

func (b *browsers) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, g := range b.gateways {
		g.Close()
	}
	clear(b.gateways)
	for _, c := range b.conns {
		c.Close()
	}
	clear(b.conns)
}

// pagePolicy is what no page of a run's browser may reach: the bridge,
// every DevTools endpoint the host drives, and the loopback endpoints the
// host denies scripts; and the local pages every run's tabs may load.
func (m *Manager) pagePolicy() cdp.PagePolicy {
	deny := append([]string{m.bridge.Addr()}, m.cfg.DenyLoopback...)
	if d, ok := m.cfg.Host.Tabs.(DevToolsEndpoints); ok {
		deny = append(deny, d.DevToolsEndpoints()...)
	}
	return cdp.PagePolicy{Deny: deny, AllowLocal: m.cfg.AllowLocalSites}
}

// runTab is a tab a run resolved, with its CDP session once attached.
type runTab struct {
	id         string
	opened     bool // the run opened it, so the run may close it
	background bool // it holds one of the Manager's background slots
	foreground bool // it holds one of the Manager's foreground slots
	hidden     bool // the run opened it in the background

	mu  sync.Mutex
	cdp *cdp.Tab

	dmu     sync.Mutex
	dialogs dialogPolicy // what tab.onDialog chose; it outlives a session
}

// knowTab records a tab the run resolved; only such tabs can be driven.
// It returns info, which is what a script is told of the tab.
func (r *Run) knowTab(info TabInfo, opened, background bool) TabInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tabs == nil {
		r.tabs = map[string]*runTab{}
	}
	t := r.tabs[info.ID]
	if t == nil {
		t = &runTab{id: info.ID}
		r.tabs[info.ID] = t
	}
	t.opened = t.opened || opened
	t.background = t.background || (opened && background)
	t.foreground = t.foreground || (opened && !background)
	t.hidden = t.hidden || (opened && background)
	return info
}

// tab returns the attached tab id names. The session is the run's own: its
// page actions run only on the script's sites= and are logged to the
// run's history.
func (r *Run) tab(ctx context.Context, id string) (*runTab, *cdp.Tab, error) {
	r.mu.Lock()
	t := r.tabs[id]
	r.mu.Unlock()
	if t == nil {
		return nil, nil, codeErr(CodeNotFound, capnweb.NameError, "no tab %q: get tabs from tabs.active, find, all, open or triggered", id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cdp != nil && t.cdp.Err() == nil {
		return t, t.cdp, nil
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	tabs := r.m.cfg.Host.Tabs
	target, err := tabs.Target(ctx, r.Info(), id)
	if err != nil {
		return nil, nil, browserErr(err)
	}
	b := target.Browser
	if b == nil {
		if b, err = r.m.browsers.get(ctx, r.m.log, target.Endpoint); err != nil {
			return nil, nil, browserErr(err)
		}
	}
	gw, err := r.m.browsers.gateway(ctx, b, r.m.pagePolicy())
	if err != nil {
		return nil, nil, browserErr(err)
	}
	ct, err := b.AttachWith(ctx, target.TargetID, r.tabOptions(gw))
	if err != nil {
		return nil, nil, browserErr(err)
	}
	ct.HandleDialogs(t.answerDialog)
	t.cdp = ct
	return t, ct, nil
}

// tabOptions are the options of the run's tab sessions.
func (r *Run) tabOptions(gw *cdp.Gateway) cdp.TabOptions {
	return cdp.TabOptions{Sites: r.sites(), Log: r.logAction, Gateway: gw, RefuseServiceWorkers: !r.m.cfg.KeepServiceWorkers}
}

// sites is the script's sites= for its tab sessions: nil when it names
// none (any web page).
func (r *Run) sites() []string {
	if len(r.header.Sites) == 0 {
		return nil
	}
	return r.header.Sites
}

// logAction records one page action or refusal of the run's tabs.
func (r *Run) logAction(a cdp.Action) {
	r.recordAction(history.Action{At: time.Now().UTC(), Method: a.Method, Target: a.Target, Site: a.Site, Outcome: a.Outcome})
}

// releaseTimeout bounds how long a settling run gives the host to close
// the tabs it opened: a host's Close may wait for the browser's
// beforeunload handling, yet a stuck browser must not hold the run open.
const releaseTimeout = 10 * time.Second

// releaseTabs closes every tab the run opened and detaches from the rest.
func (r *Run) releaseTabs() {
	r.mu.Lock()
	tabs := r.tabs
	r.tabs = nil
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for _, t := range tabs {
		r.dropTab(ctx, t, t.opened)
	}
}

// dropTab detaches from t, closes it through the host when close is set,
// and gives back its slot once the tab is gone.
func (r *Run) dropTab(ctx context.Context, t *runTab, close bool) error {
	t.mu.Lock()
	if t.cdp != nil {
		t.cdp.Detach(ctx)
	}
	t.mu.Unlock()
	var err error
	if close {
		err = r.m.cfg.Host.Tabs.Close(ctx, r.Info(), t.id)
		if err == nil {
			err = r.awaitTabGone(ctx, t.id)
		}
	}
	if t.background {
		t.background = false
		r.m.bgTabs.release()
	}
	if t.foreground {
		t.foreground = false
		r.m.fgTabs.release()
	}
	return err
}

// tabGonePoll is how often awaitTabGone asks the host for its tabs.
const tabGonePoll = 10 * time.Millisecond

// awaitTabGone returns once the host no longer lists tab id. A browser
// may answer a close before the tab is gone; until it is, the tab still
// counts against the slots, and a script would still see it in tabs.all.
func (r *Run) awaitTabGone(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, defaultTabWait)
	defer cancel()
	for {
		infos, err := r.m.cfg.Host.Tabs.All(ctx, r.Info())
		if err != nil || !slices.ContainsFunc(infos, func(i TabInfo) bool { return i.ID == id }) {
			return nil // a host that cannot list its tabs has nothing to wait for
		}
		select {
		case <-time.After(tabGonePoll):
		case <-ctx.Done():
			return fmt.Errorf("closing tab %s: it is still open: %w", id, ctx.Err())
		}
	}
}

// hiddenTab reports whether the run opened tab id in the background.
func (r *Run) hiddenTab(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tabs[id]
	return t != nil && t.hidden
}

// tabsAPI is tabs: resolving tabs.
type tabsAPI struct{ r *Run }

func (a *tabsAPI) host() (Tabs, error) {
	if a.r.m.cfg.Host.Tabs == nil {
		return nil, noHost("tabs")
	}
	return a.r.m.cfg.Host.Tabs, nil
}

func (a *tabsAPI) Active(ctx context.Context) (TabInfo, error) {
	h, err := a.host()
	if err != nil {
		return TabInfo{}, err
	}
	info, err := h.Active(ctx, a.r.Info())
	if err != nil {
		return TabInfo{}, browserErr(err)
	}
	return a.r.knowTab(info, false, false), nil
}

func (a *tabsAPI) Find(ctx context.Context, pattern string) ([]TabInfo, error) {
	h, err := a.host()
	if err != nil {
		return nil, err
	}
	infos, err := h.Find(ctx, a.r.Info(), pattern)
	return a.list(infos, err)
}

func (a *tabsAPI) All(ctx context.Context) ([]TabInfo, error) {
	h, err := a.host()
	if err != nil {
		return nil, err
	}
	infos, err := h.All(ctx, a.r.Info())
	return a.list(infos, err)
}

func (a *tabsAPI) list(infos []TabInfo, err error) ([]TabInfo, error) {
	if err != nil {
		return nil, browserErr(err)
	}
	out := make([]TabInfo, 0, len(infos))
	for _, info := range infos {
		out = append(out, a.r.knowTab(info, false, false))
	}
	return out, nil
}

// Open opens a tab at url. Every open waits for one of the Manager's
// slots (background and foreground tabs have their own), in FIFO order.
// The host opens the tab blank; the run's own session then takes it to url
// under the page policy, so the first request is already guarded.
func (a *tabsAPI) Open(ctx context.Context, rawURL string, opts objArg[OpenTabOptions]) (TabInfo, error) {
	h, err := a.host()
	if err != nil {
		return TabInfo{}, err
	}
	o, err := opts.decode("tabs.open", "options")
	if err != nil {
		return TabInfo{}, err
	}
	if err := cdp.CheckNavigation(rawURL); err != nil {
		a.r.logAction(cdp.Action{Method: "open", Outcome: CodeNavigationBlocked})
		return TabInfo{}, codeErr(CodeNavigationBlocked, capnweb.NameTypeError, "tabs.open takes an http or https URL, not %q", rawURL)
	}
	if o.Timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = withTimeout(ctx, o.Timeout)
		defer cancel()
	}
	slots, order := &a.r.m.fgTabs, &a.r.m.fgOrder
	if o.Background {
		slots, order = &a.r.m.bgTabs, &a.r.m.bgOrder
	}
	if o.Seq != nil {
		a.r.awaitOpenTurn(ctx, *o.Seq)
	}
	place, ticket := order.enter(slots)
	if o.Seq != nil {
		a.r.openTurnDone()
	}
	if !slots.wait(place, ctx.Done()) {
		order.done(ticket)
		return TabInfo{}, codeErr(CodeTimeout, capnweb.NameError, "waiting for a tab slot (at most %d open at once): %v", slots.size(), ctx.Err())
	}
	// Tabs open in the order they were queued, not in whatever order
	// the goroutines that got slots happen to run.
	order.await(ctx, ticket)
	info, err := h.Open(ctx, a.r.Info(), "about:blank", TabOpenOptions{Background: o.Background})
	order.done(ticket)
	if err != nil {
		slots.release()
		return TabInfo{}, browserErr(err)
	}
	tab := a.r.knowTab(info, true, o.Background)
	_, t, err := a.r.tab(ctx, info.ID)
	if err == nil && rawURL != "about:blank" {
		_, err = t.Goto(ctx, rawURL, cdp.Load)
	}
	if err != nil {
		a.r.mu.Lock()
		rt := a.r.tabs[info.ID]
		delete(a.r.tabs, info.ID)
		a.r.mu.Unlock()
		if rt != nil {
			_ = a.r.dropTab(context.WithoutCancel(ctx), rt, true)
		}
		return TabInfo{}, browserErr(err)
	}
	tab.URL = rawURL
	return tab, nil
}

// turnstile lets numbered tickets through one at a time, in order.
type turnstile struct {
	mu      sync.Mutex
	issued  int
	next    int
	passed  map[int]bool // done tickets waiting for an earlier one
	changed chan struct{}
}

// enter takes a place in q and a ticket, atomically, so ticket order is
// queue order.
func (t *turnstile) enter(q *fifo) (chan struct{}, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ticket := t.issued
	t.issued++
	return q.enter(), ticket
}

// await returns when every earlier ticket is done, or ctx ends.
func (t *turnstile) await(ctx context.Context, ticket int) {
	for {
		t.mu.Lock()
		if t.next >= ticket {
			t.mu.Unlock()
			return
		}
		if t.changed == nil {
			t.changed = make(chan struct{})
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// done lets the tickets after this one through.
func (t *turnstile) done(ticket int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.passed == nil {
		t.passed = map[int]bool{}
	}
	t.passed[ticket] = true
	for t.passed[t.next] {
		delete(t.passed, t.next)
		t.next++
	}
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// maxOpenReorder bounds how long an open waits for the script's earlier
// opens to reach the host (they were sent first, but calls run
// concurrently); a lost one cannot stall the rest.
const maxOpenReorder = 2 * time.Second

// awaitOpenTurn waits until every background open the script made before
// number seq has taken its place in the Manager's queue.
func (r *Run) awaitOpenTurn(ctx context.Context, seq int) {
	deadline := time.Now().Add(maxOpenReorder)
	r.openMu.Lock()
	defer r.openMu.Unlock()
	for r.openNext < seq && time.Now().Before(deadline) && ctx.Err() == nil {
		ch := r.openTurn
		if ch == nil {
			ch = make(chan struct{})
			r.openTurn = ch
		}
		r.openMu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-ctx.Done():
		}
		r.openMu.Lock()
	}
}

// openTurnDone lets the next background open take its place.
func (r *Run) openTurnDone() {
	r.openMu.Lock()
	defer r.openMu.Unlock()
	r.openNext++
	if r.openTurn != nil {
		close(r.openTurn)
		r.openTurn = nil
	}
}

// Triggered returns the tab that triggered the run, if any.
func (a *tabsAPI) Triggered(ctx context.Context) (any, error) {
	h, err := a.host()
	if err != nil {
		return nil, err
	}
	id := a.r.req.TriggerTab
	if id == "" {
		return capnweb.Undefined{}, nil
	}
	infos, err := h.All(ctx, a.r.Info())
	if err != nil {
		return nil, browserErr(err)
	}
	for _, info := range infos {
		if info.ID == id {
			return a.r.knowTab(info, false, false), nil
		}
	}
	return capnweb.Undefined{}, nil
}

// tabAPI is tab: the data plane of one resolved tab.
type tabAPI struct{ r *Run }

func (a *tabAPI) URL(ctx context.Context, id string) (string, error) {
	ctx, cancel := boundWait(ctx)
	defer cancel()
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return "", err
	}
	u, err := t.URL(ctx)
	return u, browserErr(err)
}

func (a *tabAPI) Title(ctx context.Context, id string) (string, error) {
	ctx, cancel := boundWait(ctx)
	defer cancel()
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return "", err
	}
	s, err := t.Title(ctx)
	return s, browserErr(err)
}

// tabCall is a call on one of the run's tabs: its attached session and the
// call's context, bounded by the call's timeout. end releases the context.
type tabCall struct {
	ctx context.Context
	end context.CancelFunc
	tab *cdp.Tab
}

// startCall attaches tab id for a call bounded by timeout (milliseconds;
// 0 for the host's default).
//
// The call passes the run's gate (bounds.go), as every other host call
// does: none starts once the run has settled, and one under way then is
// cancelled.
func (r *Run) startCall(ctx context.Context, id string, timeout float64) (tabCall, error) {
	ctx, leave, err := r.enter(ctx, "")
	if err != nil {
		return tabCall{}, err
	}
	_, t, err := r.tab(ctx, id)
	if err != nil {
		leave()
		return tabCall{}, err
	}
	ctx, cancel := withTimeout(ctx, timeout)
	return tabCall{ctx: ctx, end: func() { cancel(); leave() }, tab: t}, nil
}

// navCall is a navigation under way: the tab call and when the
// navigation counts as done.
type navCall struct {
	tabCall
	until cdp.WaitUntil
}

// navigation decodes a navigation's options and attaches tab id for it.
func (a *tabAPI) navigation(ctx context.Context, api, id string, opts objArg[NavigationOptions]) (navCall, error) {
	o, err := opts.decode(api, "options")
	if err != nil {
		return navCall{}, err
	}
	until, err := o.waitUntil()
	if err != nil {
		return navCall{}, err
	}
	c, err := a.r.startCall(ctx, id, o.Timeout)
	return navCall{tabCall: c, until: until}, err
}

// Goto loads rawURL and returns the document's response: {status, url},
// status 0 when there was none (about:blank, a #fragment).
func (a *tabAPI) Goto(ctx context.Context, id, rawURL string, opts objArg[NavigationOptions]) (cdp.Response, error) {
	c, err := a.navigation(ctx, "tab.goto", id, opts)
	if err != nil {
		return cdp.Response{}, err
	}
	defer c.end()
	resp, err := c.tab.Goto(c.ctx, rawURL, c.until)
	if err != nil {
		return cdp.Response{}, browserErr(err)
	}
	return *resp, nil
}

func (a *tabAPI) WaitForNavigation(ctx context.Context, id string, opts objArg[NavigationOptions]) error {
	c, err := a.navigation(ctx, "tab.waitForNavigation", id, opts)
	if err != nil {
		return err
	}
	defer c.end()
	if err := c.tab.WaitNavigated(c.ctx, c.until); err != nil {
		if errors.Is(err, cdp.ErrTimeout) {
			return codeErr(CodeTimeout, capnweb.NameError, "no navigation of the tab completed: %v", err)
		}
		return browserErr(err)
	}
	return nil
}

// WaitFor waits for a CSS selector to match, or for a target to resolve
// to a visible element.
func (a *tabAPI) WaitFor(ctx context.Context, id string, what capnweb.Value, opts objArg[WaitForOptions]) error {
	const api = "tab.waitFor"
	var tg *cdp.Locator
	switch w := what.(type) {
	case string:
	case *capnweb.Object:
		var l cdp.Locator
		if err := decodeRequest(api, "target", w, &l); err != nil {
			return err
		}
		if err := checkLocator(api, l); err != nil {
			return err
		}
		tg = &l
	default:
		return codeErr(CodeInvalid, capnweb.NameTypeError, "tab.waitFor takes a CSS selector or a target")
	}
	o, err := opts.decode(api, "options")
	if err != nil {
		return err
	}
	c, err := a.r.startCall(ctx, id, o.Timeout)
	if err != nil {
		return err
	}
	defer c.end()
	if tg != nil {
		return browserErr(c.tab.WaitVisible(c.ctx, *tg))
	}
	return browserErr(c.tab.WaitFor(c.ctx, cdp.Selector(what.(string))))
}

// read runs one reader on target. Readers need only the browser grant:
// they run in the isolated world, never the page's code, and the tab's
// sites= still applies to the document they read.
func (a *tabAPI) read(ctx context.Context, api, id string, target objArg[cdp.Locator], f func(context.Context, *cdp.Tab, cdp.Locator) error) error {
	tg, err := locatorOf(api, target)
	if err != nil {
		return err
	}
	c, err := a.r.startCall(ctx, id, 0)
	if err != nil {
		return err
	}
	defer c.end()
	return browserErr(f(c.ctx, c.tab, tg))
}

func (a *tabAPI) Text(ctx context.Context, id string, target objArg[cdp.Locator]) (s string, err error) {
	err = a.read(ctx, "tab.text", id, target, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		s, err = t.Text(ctx, tg)
		return err
	})
	return s, err
}

func (a *tabAPI) Value(ctx context.Context, id string, target objArg[cdp.Locator]) (s string, err error) {
	err = a.read(ctx, "tab.value", id, target, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		s, err = t.Value(ctx, tg)
		return err
	})
	return s, err
}

// Attribute returns the attribute's value, or null when the element has
// none.
func (a *tabAPI) Attribute(ctx context.Context, id string, target objArg[cdp.Locator], name string) (*string, error) {
	if name == "" {
		return nil, codeErr(CodeInvalid, capnweb.NameTypeError, "tab.attribute needs an attribute name")
	}
	var v *string
	err := a.read(ctx, "tab.attribute", id, target, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) error {
		s, ok, err := t.Attribute(ctx, tg, name)
		if ok {
			v = &s
		}
		return err
	})
	return v, err
}

func (a *tabAPI) Checked(ctx context.Context, id string, target objArg[cdp.Locator]) (b bool, err error) {
	err = a.read(ctx, "tab.checked", id, target, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		b, err = t.Checked(ctx, tg)
		return err
	})
	return b, err
}

func (a *tabAPI) Visible(ctx context.Context, id string, target objArg[cdp.Locator]) (b bool, err error) {
	err = a.read(ctx, "tab.visible", id, target, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		b, err = t.IsVisible(ctx, tg)
		return err
	})
	return b, err
}

func (a *tabAPI) Count(ctx context.Context, id string, target objArg[cdp.Locator]) (n int, err error) {
	err = a.read(ctx, "tab.count", id, target, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		n, err = t.Count(ctx, tg)
		return err
	})
	return n, err
}

func (a *tabAPI) Screenshot(ctx context.Context, id string, opts objArg[ScreenshotOptions]) ([]byte, error) {
	o, err := opts.decode("tab.screenshot", "options")
	if err != nil {
		return nil, err
	}
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return nil, err
	}
	so := cdp.ScreenshotOptions{FullPage: o.FullPage}
	if s, ok := a.r.m.cfg.Host.Tabs.(Screenshotter); ok {
		so.Capture = func(ctx context.Context) ([]byte, error) {
			return s.Screenshot(ctx, a.r.Info(), id, so.FullPage)
		}
	}
	png, err := t.Screenshot(ctx, so)
	return png, browserErr(err)
}

// Close closes a tab the run opened. The user's own tabs (found with
// active, find, all or triggered) are the user's to close.
func (a *tabAPI) Close(ctx context.Context, id string) error {
	a.r.mu.Lock()
	t := a.r.tabs[id]
	if t != nil && t.opened {
		delete(a.r.tabs, id)
	}
	a.r.mu.Unlock()
	if t == nil {
		return codeErr(CodeNotFound, capnweb.NameError, "no tab %q", id)
	}
	if !t.opened {
		a.r.logAction(cdp.Action{Method: "close", Outcome: CodeNotGranted})
		return codeErr(CodeNotGranted, capnweb.NameError, "tab.close closes only tabs this script opened with tabs.open; this tab is the user's")
	}
	return browserErr(a.r.dropTab(ctx, t, true))
}

// pageJsAPI is pageJs: code in the page's main world.
type pageJsAPI struct{ r *Run }

// Evaluate keeps the key order of objects both ways: arguments arrive as
// ordered objects and results are decoded as JSON.parse would, so a
// script's Object.keys sees the page's order.
func (a *pageJsAPI) Evaluate(ctx context.Context, id, source string, args []capnweb.Value) (any, error) {
	ctx, cancel := boundWait(ctx)
	defer cancel()
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(args))
	for i, v := range args {
		vals[i] = v
	}
	raw, err := t.Evaluate(ctx, source, vals...)
	if err != nil {
		if unserializable(err) {
			return nil, codeErr(CodeNotSerializable, capnweb.NameTypeError,
				"the function's result cannot be sent back as JSON (a DOM node, a window, a symbol or a circular object): return plain data, such as el.textContent")
		}
		return nil, browserErr(err)
	}
	if raw == nil {
		return capnweb.Undefined{}, nil
	}
	return capnweb.DecodeJSON(raw)
}

// formsAPI is forms: trusted form actions through the form runtime.
type formsAPI struct{ r *Run }

// formCall is a form action under way: the tab call and the cdp options
// of the action.
type formCall struct {
	tabCall
	opts cdp.FormOptions
}

// start attaches tab id for one action and builds its cdp options: the
// focus hook, a dry run and custom parts. The sites= check and the log
// belong to the tab.
func (a *formsAPI) start(ctx context.Context, id string, o FormOptions) (formCall, error) {
	c, err := a.r.startCall(ctx, id, o.Timeout)
	if err != nil {
		return formCall{}, err
	}
	fc := formCall{tabCall: c, opts: cdp.FormOptions{DryRun: o.DryRun, Parts: o.Parts}}
	// A tab the run opened in the background stays there: its session
	// emulates focus, and focusing it through the host would show it,
	// making it the user's active tab and so every other run's.
	if !a.r.hiddenTab(id) {
		fc.opts.Focus = func(ctx context.Context) error { return a.r.m.cfg.Host.Tabs.Focus(ctx, a.r.Info(), id) }
	}
	return fc, nil
}

// act runs one form action on target: the options, the timeout, then f.
func (a *formsAPI) act(ctx context.Context, api, id string, target objArg[cdp.Locator], opts objArg[FormOptions], f func(formCall, cdp.Locator) error) error {
	tg, err := locatorOf(api, target)
	if err != nil {
		return err
	}
	o, err := opts.decode(api, "options")
	if err != nil {
		return err
	}
	c, err := a.start(ctx, id, o)
	if err != nil {
		return err
	}
	defer c.end()
	return browserErr(f(c, tg))
}

func (a *formsAPI) Fill(ctx context.Context, id string, target objArg[cdp.Locator], value string, opts objArg[FormOptions]) (cdp.FieldState, error) {
	var st cdp.FieldState
	err := a.act(ctx, "tab.fill", id, target, opts, func(c formCall, tg cdp.Locator) (err error) {
		st, err = c.tab.Fill(c.ctx, tg, value, c.opts)
		return err
	})
	return st, err
}

func (a *formsAPI) Check(ctx context.Context, id string, target objArg[cdp.Locator], checked bool, opts objArg[FormOptions]) error {
	return a.act(ctx, "tab.check", id, target, opts, func(c formCall, tg cdp.Locator) error {
		return c.tab.Check(c.ctx, tg, checked, c.opts)
	})
}

// Select chooses one option (a string) and returns the label shown, or
// exactly the options of a list in a <select multiple> and returns their
// labels.
func (a *formsAPI) Select(ctx context.Context, id string, target objArg[cdp.Locator], option capnweb.Value, opts objArg[FormOptions]) (any, error) {
	const api = "tab.select"
	switch o := option.(type) {
	case string:
		var label string
		err := a.act(ctx, api, id, target, opts, func(c formCall, tg cdp.Locator) (err error) {
			label, err = c.tab.Select(c.ctx, tg, o, c.opts)
			return err
		})
		return label, err
	case []any:
		options := make([]string, len(o))
		for i, v := range o {
			s, ok := v.(string)
			if !ok {
				return nil, codeErr(CodeInvalid, capnweb.NameTypeError, "tab.select: option %d is not a string", i+1)
			}
			options[i] = s
		}
		var labels []string
		err := a.act(ctx, api, id, target, opts, func(c formCall, tg cdp.Locator) (err error) {
			labels, err = c.tab.SelectAll(c.ctx, tg, options, c.opts)
			return err
		})
		if labels == nil {
			labels = []string{}
		}
		return labels, err
	}
	return nil, codeErr(CodeInvalid, capnweb.NameTypeError, "tab.select takes an option or a list of options")
}

// SetFiles puts files into a file input. Each path is resolved against
// the script's folder, as its read= grants are, and must be a file under
// one of them: a page gets only what the script could read itself.
func (a *formsAPI) SetFiles(ctx context.Context, id string, target objArg[cdp.Locator], paths []string, opts objArg[FormOptions]) error {
	const api = "tab.setFiles"
	real := make([]string, 0, len(paths))
	for _, p := range paths {
		rp, err := a.r.grantedFile(p)
		if err != nil {
			desc := ""
			if tg, terr := locatorOf(api, target); terr == nil {
				desc = tg.String()
			}
			a.r.logAction(cdp.Action{Method: "setFiles", Target: desc, Outcome: errCodeOf(err)})
			return err
		}
		real = append(real, rp)
	}
	return a.act(ctx, api, id, target, opts, func(c formCall, tg cdp.Locator) error {
		return c.tab.SetFiles(c.ctx, tg, real, c.opts)
	})
}

// OnDialog sets how the tab answers the page's dialogs from now on:
// "accept", "dismiss", {accept, promptText}, or such answers by dialog
// type ({confirm: "accept", beforeunload: "accept"}; types left out are
// dismissed). Accepting is acting on the page as the user would, so it
// needs the forms grant; without it every dialog is dismissed.
func (a *formsAPI) OnDialog(ctx context.Context, id string, answer capnweb.Value) error {
	p, err := dialogPolicyOf(answer)
	if err != nil {
		return err
	}
	rt, _, err := a.r.tab(ctx, id)
	if err != nil {
		return err
	}
	rt.dmu.Lock()
	rt.dialogs = p
	rt.dmu.Unlock()
	return nil
}

func (a *formsAPI) Click(ctx context.Context, id string, target objArg[cdp.Locator], opts objArg[FormOptions]) error {
	return a.act(ctx, "tab.click", id, target, opts, func(c formCall, tg cdp.Locator) error {
		return c.tab.ClickTarget(c.ctx, tg, c.opts)
	})
}

// Press presses key, on opts.target when given (focusing it first), else on
// whatever has focus; opts.modifiers lists held keys.
func (a *formsAPI) Press(ctx context.Context, id, key string, opts objArg[PressOptions]) error {
	const api = "tab.press"
	o, err := opts.decode(api, "options")
	if err != nil {
		return err
	}
	var mods cdp.Modifier
	for _, m := range o.Modifiers {
		switch m {
		case "Alt":
			mods |= cdp.Alt
		case "Control", "Ctrl":
			mods |= cdp.Ctrl
		case "Meta":
			mods |= cdp.Meta
		case "Shift":
			mods |= cdp.Shift
		default:
			return codeErr(CodeInvalid, capnweb.NameTypeError, "unknown modifier %v: use Alt, Control, Meta or Shift", m)
		}
	}
	if o.Target != nil {
		if err := checkLocator(api, *o.Target); err != nil {
			return err
		}
	}
	c, err := a.start(ctx, id, o.FormOptions)
	if err != nil {
		return err
	}
	defer c.end()
	if o.Target != nil {
		return browserErr(c.tab.PressTarget(c.ctx, *o.Target, key, mods, c.opts))
	}
	return browserErr(c.tab.PressKey(c.ctx, key, mods, c.opts))
}

// boundWait bounds a browser call that takes no timeout of its own
// (attaching a tab, url, title, evaluate) by the default wait: a page
// whose code never yields (a dialog storm, a busy loop) must not hold a
// call, and so the script, for ever.
func boundWait(ctx context.Context) (context.Context, context.CancelFunc) {
	return withTimeout(ctx, 0)
}

// withTimeout bounds a browser wait by ms milliseconds, or by a default
// when ms is not positive, so that nothing waits forever.
func withTimeout(ctx context.Context, ms float64) (context.Context, context.CancelFunc) {
	d := defaultTabWait
	if ms > 0 {
		d = time.Duration(ms * float64(time.Millisecond))
	}
	return context.WithTimeout(ctx, d)
}

// codeErr is an error a script can branch on through err.code.
func codeErr(code, name, format string, args ...any) error {
	return capnweb.Errorf(name, map[string]any{"code": code}, format, args...)
}

// browserErr maps a cdp or host error to an error with a code.
func browserErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *capnweb.Error
	if errors.As(err, &ce) {
		return err
	}
	code := cdp.CodeOf(err)
	props := map[string]any{"code": code}
	var nc *cdp.NotCommittedError
	if errors.As(err, &nc) {
		props["kept"] = nc.Kept
	}
	var ee *cdp.EvalError
	if errors.As(err, &ee) {
		props["remoteName"], props["remoteMessage"], props["line"], props["column"] = ee.Name, ee.Message, ee.Line, ee.Column
	}
	return capnweb.Errorf(capnweb.NameError, props, "%s", scriptMessage(err, code))
}

// devtoolsURL matches a DevTools endpoint's URL (ws://127.0.0.1:9222/
// devtools/browser/<id>, http://…/devtools/page/<id>).
var devtoolsURL = regexp.MustCompile(`(?i)\b(?:wss?|https?)://[^\s"'<>]*/devtools/[^\s"'<>]*`)

// scrubEndpoints takes DevTools endpoints out of a message for a script: a
// script that learnt one could ask to be granted it, or try it.
func scrubEndpoints(msg string) string {
	return devtoolsURL.ReplaceAllString(msg, "<devtools endpoint>")
}

// dialogPolicy is how a run's tab answers dialogs: one answer for every
// type, or answers by type. The zero value dismisses everything.
type dialogPolicy struct {
	all    *cdp.DialogAnswer
	byType map[string]cdp.DialogAnswer
}

// answerDialog is the tab's cdp.DialogHandler. The cdp layer dismisses
// whatever it answers on a document outside sites=.
func (t *runTab) answerDialog(d cdp.Dialog) cdp.DialogAnswer {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	if a, ok := t.dialogs.byType[d.Type]; ok {
		return a
	}
	if t.dialogs.all != nil {
		return *t.dialogs.all
	}
	return cdp.DialogAnswer{}
}

// dialogPolicyOf reads tab.onDialog's argument.
func dialogPolicyOf(v capnweb.Value) (dialogPolicy, error) {
	bad := func(format string, args ...any) (dialogPolicy, error) {
		return dialogPolicy{}, codeErr(CodeInvalid, capnweb.NameTypeError, "tab.onDialog: "+format+
			`; pass "accept", "dismiss", {accept, promptText}, or those by type ({confirm: "accept"})`, args...)
	}
	if o, ok := v.(*capnweb.Object); ok && o.Len() > 0 {
		if _, isAnswer := o.Get("accept"); !isAnswer {
			var by DialogAnswers
			bv := reflect.ValueOf(&by).Elem()
			if err := decodeValue(bv, o, "the answers by type"); err != nil {
				return bad("%v", err)
			}
			p := dialogPolicy{byType: map[string]cdp.DialogAnswer{}}
			for _, f := range requestFields(bv.Type()) {
				x := bv.FieldByIndex(f.Index).Interface()
				if x == nil {
					continue
				}
				a, err := dialogAnswerOf(x)
				if err != nil {
					return bad("%s: %v", f.Name, err)
				}
				p.byType[f.Name] = a
			}
			return p, nil
		}
	}
	a, err := dialogAnswerOf(v)
	if err != nil {
		return bad("%v", err)
	}
	return dialogPolicy{all: &a}, nil
}

// dialogAnswerOf reads one answer.
func dialogAnswerOf(v capnweb.Value) (cdp.DialogAnswer, error) {
	switch x := v.(type) {
	case string:
		switch x {
		case "accept":
			return cdp.DialogAnswer{Accept: true}, nil
		case "dismiss":
			return cdp.DialogAnswer{}, nil
		}
		return cdp.DialogAnswer{}, fmt.Errorf("unknown answer %q", x)
	case *capnweb.Object:
		var a DialogAnswer
		if err := decodeValue(reflect.ValueOf(&a).Elem(), x, "answer"); err != nil {
			return cdp.DialogAnswer{}, err
		}
		if a.Accept == nil {
			return cdp.DialogAnswer{}, errors.New("an answer object needs accept")
		}
		return cdp.DialogAnswer{Accept: *a.Accept, PromptText: a.PromptText}, nil
	}
	return cdp.DialogAnswer{}, fmt.Errorf("an answer is a string or an object, not %s", jsKind(v))
}

// grantedFile resolves a path a script gave tab.setFiles: relative to the
// script's folder, like its read= grants, with every link followed. It
// returns the real path of a regular file under one of the run's read=
// grants (where the script could read it itself), and refuses the rest:
// not_granted outside them (or inside the host's own data), not_found for
// nothing there, invalid for a folder or a malformed path.
func (r *Run) grantedFile(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", codeErr(CodeInvalid, capnweb.NameTypeError, "tab.setFiles: %q is not a path", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(filepath.Dir(r.header.ScriptPath), p)
	}
	_, real, err := pathguard.Resolve(abs)
	if err != nil {
		return "", codeErr(CodeInvalid, capnweb.NameTypeError, "tab.setFiles: cannot resolve %q: %v", p, err)
	}
	granted := slices.ContainsFunc(r.header.Read, func(g permissions.Path) bool { return pathguard.Contains(g.Resolved, real) })
	if granted && slices.ContainsFunc(r.m.protected, func(d string) bool { return pathguard.Contains(d, real) }) {
		granted = false
	}
	if !granted {
		perm := "read=" + p
		if strings.ContainsAny(p, " \t\"") {
			perm = "read=" + strconv.Quote(p)
		}
		// permission names the key the SDK's NotGrantedError tells the
		// script to add.
		return "", capnweb.Errorf(capnweb.NameError, map[string]any{"code": CodeNotGranted, "permission": perm},
			"tab.setFiles gives a page only files the script may read: %q is not under its read= grants", p)
	}
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", codeErr(CodeNotFound, capnweb.NameError, "tab.setFiles: there is no file %q", p)
	case err != nil:
		return "", codeErr(CodeInvalid, capnweb.NameError, "tab.setFiles: %q: %v", p, err)
	case !fi.Mode().IsRegular():
		return "", codeErr(CodeInvalid, capnweb.NameTypeError, "tab.setFiles: %q is not a file", p)
	}
	return real, nil
}

// errCodeOf is the code of an error made by codeErr.
func errCodeOf(err error) string {
	var ce *capnweb.Error
	if errors.As(err, &ce) {
		if c, ok := ce.Props["code"].(string); ok {
			return c
		}
	}
	return cdp.CodeOf(err)
}
