package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/rpc/capnweb"
)

// A run's tabs: the ones it resolved (only those can be driven), each
// attached on first use through the Manager's connection pool and behind
// its page gateway, and given back when the run ends.

// errBrowserUnreachable is what a run is told when the runner cannot
// connect to the browser of a tab: its endpoint, which cdp's errors name,
// is the host's and is logged only.
var errBrowserUnreachable = fmt.Errorf("%w: cannot connect to the tab's browser", cdp.ErrBrowserClosed)

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
	r.traceTitle(info)
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
		if b, err = r.m.browsers.Browser(ctx, target.Endpoint); err != nil {
			r.m.log.Warn("runner: connecting to a tab's browser", "error", err)
			return nil, nil, browserErr(errBrowserUnreachable)
		}
	}
	gw, err := r.m.browsers.Guard(ctx, b, r.m.pagePolicy())
	if err != nil {
		return nil, nil, browserErr(err)
	}
	ct, err := b.AttachWith(ctx, target.TargetID, r.traceTab(id, r.tabOptions(gw)))
	if err != nil {
		return nil, nil, browserErr(err)
	}
	ct.HandleDialogs(r.traceAttached(id, ct, t.answerDialog))
	t.cdp = ct
	return t, ct, nil
}

// tabOptions are the options of the run's tab sessions.
func (r *Run) tabOptions(gw *cdp.Gateway) cdp.TabOptions {
	return cdp.TabOptions{Sites: r.sites(), Log: r.logAction, Gateway: gw, RefuseServiceWorkers: !r.m.cfg.KeepServiceWorkers,
		Popup: r.adoptPopup, Meter: runMeter{r}, Pacer: r.checks}
}

// adoptPopup makes a page one of the run's tabs opened (a popup) the
// run's: a tab it opened, closed when it ends, attached as its others
// are. It takes no slot: the page opened it, not tabs.open. A run that
// has ended adopts nothing, and the gateway closes the popup.
func (r *Run) adoptPopup(ctx context.Context, id string) (*cdp.Tab, error) {
	r.mu.Lock()
	if r.tabsReleased {
		r.mu.Unlock()
		return nil, fmt.Errorf("runner: run %s has ended", r.id)
	}
	if r.tabs == nil {
		r.tabs = map[string]*runTab{}
	}
	if r.tabs[id] == nil {
		r.tabs[id] = &runTab{id: id, opened: true}
	}
	r.mu.Unlock()
	_, t, err := r.tab(ctx, id)
	return t, err
}

// hideLocal keeps what a run may not see of a tab on a local address it
// was not granted (cdp.LocalGrant): its address and title, which are the
// local service's to tell. ok is false when the tab is better left out
// of a list altogether.
func (r *Run) hideLocal(info TabInfo) (_ TabInfo, ok bool) {
	if cdp.LocalGrant(info.URL, r.sites(), r.m.cfg.AllowLocalSites) == "" {
		return info, true
	}
	info.URL, info.Title = "", ""
	return info, false
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
	r.tabs, r.tabsReleased = nil, true
	r.mu.Unlock()
	// After tabsReleased: no expectation is added once this has run.
	r.closeDownloads()
	r.m.tabs.forget(r.id)
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
		r.m.tabs.background.release(r.id)
	}
	if t.foreground {
		t.foreground = false
		r.m.tabs.foreground.release(r.id)
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
