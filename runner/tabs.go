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

func (a *tabsAPI) Active(ctx context.Context) (TabInfo, error) {
	return invoke(ctx, a.r, mTabsActive, callReq{}, func(c *call) (TabInfo, error) {
		info, err := a.r.m.cfg.Host.Tabs.Active(c.ctx, a.r.Info())
		if err != nil {
			return TabInfo{}, err
		}
		info, _ = a.r.hideLocal(info)
		return a.r.knowTab(info, false, false), nil
	})
}

func (a *tabsAPI) Find(ctx context.Context, pattern string) ([]TabInfo, error) {
	return invoke(ctx, a.r, mTabsFind, callReq{}, func(c *call) ([]TabInfo, error) {
		return a.list(a.r.m.cfg.Host.Tabs.Find(c.ctx, a.r.Info(), pattern))
	})
}

func (a *tabsAPI) All(ctx context.Context) ([]TabInfo, error) {
	return invoke(ctx, a.r, mTabsAll, callReq{}, func(c *call) ([]TabInfo, error) {
		return a.list(a.r.m.cfg.Host.Tabs.All(c.ctx, a.r.Info()))
	})
}

func (a *tabsAPI) list(infos []TabInfo, err error) ([]TabInfo, error) {
	if err != nil {
		return nil, err
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
func (a *tabsAPI) Open(ctx context.Context, rawURL string, o openTabOptions) (TabInfo, error) {
	return invoke(ctx, a.r, mTabsOpen, callReq{}, func(c *call) (TabInfo, error) {
		return a.open(c, rawURL, o)
	})
}

func (a *tabsAPI) open(c *call, rawURL string, o openTabOptions) (TabInfo, error) {
	ctx := c.ctx
	if err := cdp.CheckNavigation(rawURL); err != nil {
		a.r.logAction(cdp.Action{Method: "open", Outcome: string(errcode.NavigationBlocked)})
		return TabInfo{}, codeErr(errcode.NavigationBlocked, capnweb.NameTypeError, "tabs.open takes an http or https URL, not %q", rawURL)
	}
	if err := checkTimeout("tabs.open", o.Timeout); err != nil {
		return TabInfo{}, err
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
	info, err := a.r.m.cfg.Host.Tabs.Open(ctx, a.r.Info(), "about:blank", TabOpenOptions{Background: o.Background})
	line.opened()
	if err != nil {
		line.release(a.r.id)
		return TabInfo{}, err
	}
	tab := a.r.knowTab(info, true, o.Background)
	c.rec.tab = info.ID
	_, t, err := a.r.tab(ctx, info.ID)
	if err == nil {
		c.rec.on = t
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
		return TabInfo{}, err
	}
	tab.URL = rawURL
	return tab, nil
}

// Triggered returns the tab that triggered the run, if any.
func (a *tabsAPI) Triggered(ctx context.Context) (any, error) {
	return invoke(ctx, a.r, mTabsTriggered, callReq{}, func(c *call) (any, error) {
		id := a.r.req.TriggerTab
		if id == "" {
			return capnweb.Undefined{}, nil
		}
		infos, err := a.r.m.cfg.Host.Tabs.All(c.ctx, a.r.Info())
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			if info.ID == id {
				info, _ = a.r.hideLocal(info)
				return a.r.knowTab(info, false, false), nil
			}
		}
		return capnweb.Undefined{}, nil
	})
}

// kindOf names a tab line.
func kindOf(background bool) string {
	if background {
		return "background"
	}
	return "foreground"
}
