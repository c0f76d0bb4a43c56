package runner

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// Defaults for browser work.
const (
	DefaultMaxBackgroundTabs = 4
	DefaultMaxForegroundTabs = 4
	defaultTabWait           = 30 * time.Second
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
		return nil, nil, codeErr(errcode.NotFound, capnweb.NameError, "no tab %q: get tabs from tabs.active, find, all, open or triggered", id)
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
		a.r.logAction(cdp.Action{Method: "open", Outcome: string(errcode.NavigationBlocked)})
		return TabInfo{}, codeErr(errcode.NavigationBlocked, capnweb.NameTypeError, "tabs.open takes an http or https URL, not %q", rawURL)
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
		return TabInfo{}, codeErr(errcode.Timeout, capnweb.NameError, "waiting for a tab slot (at most %d open at once): %v", slots.size(), ctx.Err())
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
