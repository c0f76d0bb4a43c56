package runner

import (
	"context"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/rpc/capnweb"
)

// Defaults for browser work.
const (
	DefaultMaxBackgroundTabs = 4
	DefaultMaxForegroundTabs = 4
	defaultTabWait           = 30 * time.Second
)

// tabsAPI is tabs: resolving tabs.
type tabsAPI struct{ r *Run }

func (a *tabsAPI) host() (Tabs, error) {
	if a.r.m.cfg.Host.Tabs == nil {
		return nil, noHost("tabs")
	}
	return a.r.m.cfg.Host.Tabs, nil
}

func (a *tabsAPI) Active(ctx context.Context) (_ TabInfo, err error) {
	tc := a.r.call(ctx, "tabs.active", "")
	defer tc.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return TabInfo{}, err
	}
	defer leave()
	h, err := a.host()
	if err != nil {
		return TabInfo{}, err
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	info, err := h.Active(ctx, a.r.Info())
	if err != nil {
		return TabInfo{}, browserErr(hostAnswer(ctx, "tabs.active", err))
	}
	info, _ = a.r.hideLocal(info)
	return a.r.knowTab(info, false, false), nil
}

func (a *tabsAPI) Find(ctx context.Context, pattern string) (_ []TabInfo, err error) {
	tc := a.r.call(ctx, "tabs.find", "")
	defer tc.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return nil, err
	}
	defer leave()
	h, err := a.host()
	if err != nil {
		return nil, err
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	infos, err := h.Find(ctx, a.r.Info(), pattern)
	return a.list(infos, hostAnswer(ctx, "tabs.find", err))
}

func (a *tabsAPI) All(ctx context.Context) (_ []TabInfo, err error) {
	tc := a.r.call(ctx, "tabs.all", "")
	defer tc.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return nil, err
	}
	defer leave()
	h, err := a.host()
	if err != nil {
		return nil, err
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	infos, err := h.All(ctx, a.r.Info())
	return a.list(infos, hostAnswer(ctx, "tabs.all", err))
}

func (a *tabsAPI) list(infos []TabInfo, err error) ([]TabInfo, error) {
	if err != nil {
		return nil, browserErr(err)
	}
	out := make([]TabInfo, 0, len(infos))
	for _, info := range infos {
		// A tab on a local address the run may not reach (the user's,
		// or a popup refused a moment ago) is not listed.
		if _, ok := a.r.hideLocal(info); ok {
			out = append(out, a.r.knowTab(info, false, false))
		}
	}
	return out, nil
}

// Open opens a tab at url. Every open waits in the Manager's line for its
// kind (background or foreground) for a slot and its turn (see tabLine).
// The host opens the tab blank; the run's own session then takes it to url
// under the page policy, so the first request is already guarded.
func (a *tabsAPI) Open(ctx context.Context, rawURL string, o openTabOptions) (_ TabInfo, err error) {
	tc := a.r.call(ctx, "tabs.open", "")
	defer tc.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return TabInfo{}, err
	}
	defer leave()
	h, err := a.host()
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
	line := a.r.m.tabs.of(o.Background)
	if !line.await(ctx, line.join(a.r.id, o.Seq)) {
		if line.atShare(a.r.id) {
			return TabInfo{}, codeErr(errcode.Timeout, capnweb.NameError,
				"waiting for a tab slot: this run holds its share of them (%d of the %d %s tabs open at once): close one of its tabs first: %v",
				line.share, line.size, kindOf(o.Background), ctx.Err())
		}
		return TabInfo{}, codeErr(errcode.Timeout, capnweb.NameError, "waiting for a tab slot (at most %d open at once): %v", line.size, ctx.Err())
	}
	if o.Timeout == 0 {
		// The turn in line may take the run's time; opening and loading
		// take the default wait, as tab.goto does.
		var cancel context.CancelFunc
		ctx, cancel = boundWait(ctx)
		defer cancel()
	}
	info, err := h.Open(ctx, a.r.Info(), "about:blank", TabOpenOptions{Background: o.Background})
	line.opened()
	if err != nil {
		line.release(a.r.id)
		return TabInfo{}, browserErr(err)
	}
	tab := a.r.knowTab(info, true, o.Background)
	tc.tab = info.ID
	_, t, err := a.r.tab(ctx, info.ID)
	if err == nil {
		tc.on = t
		if rawURL != "about:blank" {
			_, err = t.Goto(ctx, rawURL, cdp.Load)
		}
	}
	if err != nil {
		a.r.mu.Lock()
		rt := a.r.tabs[info.ID]
		delete(a.r.tabs, info.ID)
		a.r.mu.Unlock()
		if rt != nil {
			cctx, cancel := boundWait(context.WithoutCancel(ctx))
			_ = a.r.dropTab(cctx, rt, true)
			cancel()
		}
		return TabInfo{}, browserErr(err)
	}
	tab.URL = rawURL
	return tab, nil
}

// Triggered returns the tab that triggered the run, if any.
func (a *tabsAPI) Triggered(ctx context.Context) (_ any, err error) {
	tc := a.r.call(ctx, "tabs.triggered", "")
	defer tc.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return nil, err
	}
	defer leave()
	h, err := a.host()
	if err != nil {
		return nil, err
	}
	id := a.r.req.TriggerTab
	if id == "" {
		return capnweb.Undefined{}, nil
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	infos, err := h.All(ctx, a.r.Info())
	if err != nil {
		return nil, browserErr(hostAnswer(ctx, "tabs.triggered", err))
	}
	for _, info := range infos {
		if info.ID == id {
			info, _ = a.r.hideLocal(info)
			return a.r.knowTab(info, false, false), nil
		}
	}
	return capnweb.Undefined{}, nil
}

// kindOf names a tab line.
func kindOf(background bool) string {
	if background {
		return "background"
	}
	return "foreground"
}
