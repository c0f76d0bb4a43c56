package cdp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/fetch"
	"github.com/mafredri/cdp/protocol/network"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/tranquil/automation/errcode"
)

// Popups. A page a guarded tab's pages open (window.open, a link or form
// with a target, noopener or not) is that tab's: the browser names the
// opener of every new page, which the gateway attaches before it runs
// (workers.go) and gives its opener's socket rules (popupguard.go). The
// gateway then holds the popup's first document request until it has
// judged it by the opener's grants: a local address the opener may not
// reach closes the popup before the request goes out, so nothing of it
// (its address, its title) is ever a tab a script can read. Any other
// address is let go, and the popup attached as a guarded tab of its own as
// it loads ([TabOptions.Popup] attaches it as the caller's); its requests
// are judged as its opener's until then. A popup that loads nothing
// (about:blank) is attached a moment after it runs.
//
// What this does not stop: the opener's code can run in a popup's blank
// first document (same origin) before that document has the rules, and
// open a WebSocket from there.

// popup is a page a guarded tab opened.
type popup struct {
	id     string
	opener *Tab
	once   sync.Once
	done   chan struct{} // closed once adopted or refused
	asked  chan struct{} // closed when its first document request comes
	askedO sync.Once
	guard  sync.Once // the rules go on once (popupguard.go)
	gerr   error
	tab    *Tab // the popup's guarded session, once adopted
	err    error
}

func (p *popup) owners() []*Tab { return []*Tab{p.opener} }

// adopted is the popup's guarded session, nil until adopt is done.
func (p *popup) adopted() *Tab {
	select {
	case <-p.done:
		return p.tab
	default:
		return nil
	}
}

// maxPopups bounds the popups the gateway follows at once; past it, the
// oldest are forgotten (and their requests judged by their own sessions).
const maxPopups = 256

// popupOf is the popup info describes, when a guarded tab (its page or one
// of its frames) opened it; nil for any other page.
func (g *Gateway) popupOf(info target.Info) *popup {
	if info.Type != "page" || info.OpenerID == nil {
		return nil
	}
	id := string(info.TargetID)
	g.mu.Lock()
	p := g.popups[id]
	g.mu.Unlock()
	if p != nil {
		return p
	}
	var opener *Tab
	for _, t := range g.guarded() {
		if t.id == string(*info.OpenerID) || info.OpenerFrameID != nil && t.hasFrame(string(*info.OpenerFrameID)) {
			opener = t
			break
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.popups[string(*info.OpenerID)]; opener == nil && q != nil {
		opener = q.opener // a popup's popup, before the first is attached
	}
	if opener == nil {
		return nil
	}
	if p := g.popups[id]; p != nil {
		return p
	}
	if len(g.popups) >= maxPopups {
		clear(g.popups)
	}
	p = &popup{id: id, opener: opener, done: make(chan struct{}), asked: make(chan struct{})}
	g.popups[id] = p
	return p
}

// hasFrame reports whether frame is one of the tab's, committed or not.
func (t *Tab) hasFrame(frame string) bool { return t.frames.has(frame, true) }

// pendingPopup is the popup whose main frame frame is, while it has shown
// no document of its own yet; nil otherwise.
func (g *Gateway) pendingPopup(ctx context.Context, frame string) *popup {
	g.mu.Lock()
	p := g.popups[frame]
	g.mu.Unlock()
	if p == nil {
		if _, known := g.knownOwner(frame); known || !g.anyTabs() {
			return nil
		}
		// The report of a new page and its first request come on
		// different streams; ask rather than wait.
		cctx, cancel := context.WithTimeout(ctx, defaultCleanupTimeout)
		defer cancel()
		r, err := g.b.c.Target.GetTargetInfo(cctx, target.NewGetTargetInfoArgs().SetTargetID(target.ID(frame)))
		if err != nil {
			return nil
		}
		if p = g.popupOf(r.TargetInfo); p == nil {
			return nil
		}
	}
	if t := p.adopted(); t != nil && t.showsDocument() {
		return nil
	}
	return p
}

// showsDocument reports whether the tab's main frame committed a document
// of its own, not the blank one a new page starts with.
func (t *Tab) showsDocument() bool {
	u := t.nav.mainURL()
	return u != "" && u != "about:blank"
}

// decidePopup judges a popup's first document request by its opener's
// grants: a refused one closes the popup before the request goes out; an
// allowed one goes once the popup is attached and guarded.
func (g *Gateway) decidePopup(ctx context.Context, ev *fetch.RequestPausedReply, p *popup) {
	p.askedO.Do(func() { close(p.asked) })
	raw := ev.Request.URL
	reason := g.refusal(raw)
	if reason == "" {
		reason = g.grantRefusal(ctx, p.opener, raw)
	}
	if reason == "" {
		// The popup's page answers nothing of an attach while its first
		// request is held, so the request goes first, its sockets'
		// rules already set, and the popup is attached as it loads;
		// its requests are judged as its opener's meanwhile.
		if err := g.preGuard(ctx, p); err == nil {
			_ = g.b.c.Fetch.ContinueRequest(ctx, fetch.NewContinueRequestArgs(ev.RequestID))
			actx, cancel := context.WithTimeout(ctx, adoptWait)
			defer cancel()
			_ = g.adopt(actx, p) // one that cannot be adopted is closed
			return
		}
		reason = "the popup could not be guarded"
	}
	g.noteRefusal(p.id, raw, reason)
	p.opener.logRefusal("popup", raw, string(errcode.NavigationBlocked))
	g.closePopup(ctx, p)
	_ = g.b.c.Fetch.FailRequest(ctx, fetch.NewFailRequestArgs(ev.RequestID, network.ErrorReasonBlockedByClient))
}

// adopt attaches popup p as a guarded tab, once: through the opener's
// [TabOptions.Popup], or with the opener's own options, the opener then
// detaching it when it detaches. A popup that cannot be attached, or whose
// session is not guarded by g, is closed.
func (g *Gateway) adopt(ctx context.Context, p *popup) error {
	p.once.Do(func() {
		defer close(p.done)
		var t *Tab
		var err error
		if f := p.opener.opts.Popup; f != nil {
			t, err = f(ctx, p.id)
		} else if t, err = g.b.AttachWith(ctx, p.id, p.opener.opts); err == nil {
			p.opener.keepPopup(t)
		}
		if err == nil && (t == nil || t.opts.Gateway != g || t.id != p.id) {
			err = errors.New("cdp: the popup's session is not guarded by the opener's gateway")
		}
		p.tab, p.err = t, err
		if err != nil {
			g.closePopup(ctx, p)
		}
	})
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("cdp: attaching a popup: %w", ctx.Err())
	}
}

// adoptWait bounds attaching a popup, through the opener's Popup too.
const adoptWait = 15 * time.Second

// blankPopupWait is how long a popup may take to ask for its first
// document before it is taken for one that shows none (about:blank, or
// what its opener writes in it) and adopted as it is. A page attached
// while it still waits for the browser to run it would not answer.
const blankPopupWait = 500 * time.Millisecond

// adoptBlank adopts p, once it has run, unless its first document request
// came meanwhile (decidePopup then adopts or refuses it).
func (g *Gateway) adoptBlank(sctx context.Context, p *popup) {
	select {
	case <-p.done:
		return
	case <-p.asked:
		return
	case <-time.After(blankPopupWait):
	case <-sctx.Done():
		return
	}
	ctx, cancel := context.WithTimeout(sctx, adoptWait)
	defer cancel()
	_ = g.adopt(ctx, p)
}

// closePopup closes a popup the gateway refused and forgets it.
func (g *Gateway) closePopup(ctx context.Context, p *popup) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
	defer cancel()
	_, _ = g.b.c.Target.CloseTarget(cctx, target.NewCloseTargetArgs(target.ID(p.id)))
	g.mu.Lock()
	delete(g.popups, p.id)
	pg := g.preGuards[p.id]
	delete(g.preGuards, p.id)
	g.mu.Unlock()
	pg.release(g.b)
}

// keepPopup records a popup the gateway attached for this tab, detached
// when the tab's session ends.
func (t *Tab) keepPopup(p *Tab) {
	t.local.addPopup(p)
}

// releasePopups detaches the popups kept for the tab, once its session
// has ended.
func (t *Tab) releasePopups() {
	for _, p := range t.local.takePopups() {
		ctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
		_ = p.Detach(ctx)
		cancel()
	}
}
