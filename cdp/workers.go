package cdp

import (
	"context"
	"encoding/json"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"
)

// Workers. A tab attaches its pages' dedicated workers (and theirs) as it
// does out-of-process frames: paused at their start, given a guarded tab's
// socket rules (sockets.go), then run. Their other requests carry their
// page's frame, which the gateway judges as the page's (localnet.go).
//
// Shared and service workers belong to no page: the gateway attaches each
// as it starts (paused, on the browser's session), and one whose origin a
// guarded tab's document is on serves that tab: it gets the rules the
// tabs it serves all allow, and its requests are judged as theirs. Other
// workers are let run and left at once.

// workerFilter is what a worker's or a page's session attaches by itself.
var workerFilter = target.Filter{{Type: ptr("worker")}}

// attachWorker sets up a dedicated worker a session of the tab attached,
// paused: its session (kept until the worker or the tab ends), the rules,
// its own workers; then it runs.
func (t *Tab) attachWorker(parent *session, sessionID, targetID string) {
	ws := &session{id: sessionID, root: targetID, parent: parent}
	if !t.openSession(ws, func(method string, params json.RawMessage) { t.observeWorker(ws, method, params) }) {
		return // the connection is going; the worker goes with it
	}
	rt := ws.route
	t.local.addWorker(ws)
	// A worker's session ends with the tab's, which ends before the group
	// stops.
	t.tasks.Go("worker watch", func(context.Context) {
		select {
		case <-t.route.gone:
		case <-rt.gone:
		}
		t.dropWorker(sessionID)
	})
	t.tasks.Go("worker setup", func(ctx context.Context) {
		ctx, cancel := cleanup(ctx)
		defer cancel()
		_ = all([]func() error{
			func() error { return t.guardWorkerSockets(ctx, ws.c) },
			func() error {
				return ws.c.Target.SetAutoAttach(ctx, target.NewSetAutoAttachArgs(true, true).SetFlatten(true).SetFilter(workerFilter))
			},
		}) // a worker that went meanwhile needs nothing more
		_ = ws.c.Runtime.RunIfWaitingForDebugger(ctx)
	})
}

// openSession opens the route of s, a session the tab's sessions attached
// (a frame's or a worker's), its events going to observe; false when the
// connection is going.
func (t *Tab) openSession(s *session, observe func(string, json.RawMessage)) bool {
	conn, rt, err := t.b.m.open(context.Background(), s.id, observe)
	if err != nil {
		return false
	}
	s.route, s.conn, s.c = rt, conn, devtools.NewClient(conn)
	return true
}

// observeWorker follows the workers a worker starts.
func (t *Tab) observeWorker(ws *session, method string, params json.RawMessage) {
	switch method {
	case "Target.attachedToTarget":
		var ev target.AttachedToTargetReply
		if json.Unmarshal(params, &ev) == nil && ev.TargetInfo.Type == "worker" {
			t.attachWorker(ws, string(ev.SessionID), string(ev.TargetInfo.TargetID))
		}
	case "Target.detachedFromTarget":
		var ev struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(params, &ev) == nil {
			t.dropWorker(ev.SessionID)
		}
	}
}

// dropWorker forgets a worker's session and ends its route; it reports
// whether the session was a worker's.
func (t *Tab) dropWorker(sessionID string) bool {
	ws := t.local.dropWorker(sessionID)
	if ws == nil {
		return false
	}
	t.b.m.drop(ws.route, &DetachedError{TargetID: ws.root, Reason: ErrDetached, Detail: "worker ended"})
	return true
}

// watchTargets has the browser attach every new target (pages, shared and
// service workers, and whatever else it starts on its own), paused,
// before it runs: a popup a guarded tab opened gets its opener's rules
// (openers.go), a worker serving guarded tabs their guard; every other
// target is let run and left at once. (None may be left out: the browser
// holds a new page's first navigation once any auto-attach waits for a
// debugger, whether or not its filter takes the page.) The auto-attach is
// made on a browser session of the gateway's own, so that its reports are
// never confused with the sessions Tabs attach on the connection's.
func (g *Gateway) watchTargets(ctx, sctx context.Context) error {
	r, err := g.b.c.Target.AttachToBrowserTarget(ctx)
	if err != nil {
		return g.b.fail(err)
	}
	conn, rt, err := g.b.m.open(ctx, string(r.SessionID), func(method string, params json.RawMessage) {
		g.observeTargets(sctx, method, params)
	})
	if err != nil {
		return err
	}
	g.targets, g.tc = rt, devtools.NewClient(conn)
	// No filter: the browser's default, every target but itself and tabs.
	args := target.NewSetAutoAttachArgs(true, true).SetFlatten(true)
	if err := g.tc.Target.SetAutoAttach(ctx, args); err != nil {
		g.b.m.drop(rt, ErrDetached)
		return g.b.fail(err)
	}
	return nil
}

// observeTargets runs on the gateway session's receive goroutine: each
// target attached is taken on a goroutine of its own.
func (g *Gateway) observeTargets(sctx context.Context, method string, params json.RawMessage) {
	switch method {
	case "Target.attachedToTarget":
		var ev target.AttachedToTargetReply
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		g.mu.Lock()
		stopped := g.stopped
		if !stopped {
			g.wg.Add(1)
		}
		g.mu.Unlock()
		if stopped {
			return
		}
		go func() {
			defer g.wg.Done()
			g.take(sctx, &ev)
		}()
	case "Target.detachedFromTarget":
		var ev struct {
			SessionID string `json:"sessionId"`
			TargetID  string `json:"targetId"`
		}
		if json.Unmarshal(params, &ev) == nil {
			g.b.m.detached(ev.SessionID, ev.TargetID)
		}
	}
}

// stopTargets ends the gateway's browser session, and the auto-attach
// with it.
func (g *Gateway) stopTargets(ctx context.Context) {
	if g.targets == nil {
		return
	}
	_ = g.b.c.Target.DetachFromTarget(ctx, target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(g.targets.id)))
	g.b.m.drop(g.targets, ErrDetached)
}

// take handles one target the browser attached by itself, before it
// runs: a popup of a guarded tab gets its opener's rules (and is adopted
// once it asks for its first document); a shared or service worker that
// serves guarded tabs gets their guard, and its session is kept until it
// ends or the gateway does; the session of any other is left once it runs.
func (g *Gateway) take(sctx context.Context, ev *target.AttachedToTargetReply) {
	sessionID, info := string(ev.SessionID), ev.TargetInfo
	ctx, cancel := context.WithTimeout(sctx, defaultCleanupTimeout)
	defer cancel()
	conn, rt, err := g.b.m.open(ctx, sessionID, func(string, json.RawMessage) {})
	if err != nil {
		return
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer dcancel()
		_ = g.tc.Target.DetachFromTarget(dctx, target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(sessionID)))
		g.b.m.drop(rt, ErrDetached)
	}()
	c := devtools.NewClient(conn)
	var owners []*Tab
	switch info.Type {
	case "page":
		if p := g.popupOf(info); p != nil {
			// Its rules go on while it waits: a page's own session
			// takes them only before its document arrives.
			if g.preGuard(ctx, p) != nil {
				g.closePopup(ctx, p)
				return
			}
			// Its first document request waits for the gateway, which
			// judges it and adopts the popup then (openers.go); a
			// popup that loads nothing is adopted a moment later.
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				g.adoptBlank(sctx, p)
			}()
		}
	case "shared_worker", "service_worker":
		owners = g.tabsOnOrigin(originOf(info.URL))
	}
	if len(owners) > 0 {
		g.mu.Lock()
		g.workers[string(info.TargetID)] = owners
		g.mu.Unlock()
		_ = guardWorker(ctx, c, g.localGrants(owners))
	}
	_ = c.Runtime.RunIfWaitingForDebugger(ctx)
	if len(owners) == 0 {
		return
	}
	select {
	case <-rt.gone:
	case <-sctx.Done():
	}
	g.mu.Lock()
	delete(g.workers, string(info.TargetID))
	g.mu.Unlock()
}
