package cdp

import (
	"context"
	"encoding/json"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"
)

// A popup's socket rules (sockets.go) go on while it still waits to run,
// on a guard session the gateway attaches. Rules a popup gets once its
// first document request is on its way come into force only after that
// document's first scripts ran (measured with Chromium 156), and a Tab
// cannot be attached before then: the page answers none of the calls an
// attach makes while it waits to run or while its first request is held.
// The guard session also attaches the popup's frames and workers until its
// Tab does, giving each the rules or the worker's guard (sockets.go) before
// it runs. The Tab takes the session over (guardSockets); its frames and
// workers are then the Tab's.

// guardSession is a page's guard session and the sessions it attached.
type guardSession struct {
	rt       *route
	mu       sync.Mutex
	children map[string]*route // by session id
}

// preGuard puts popup p's opener's rules on p, once; they are in force
// when it returns.
func (g *Gateway) preGuard(ctx context.Context, p *popup) error {
	p.guard.Do(func() { p.gerr = g.attachGuard(ctx, p) })
	return p.gerr
}

func (g *Gateway) attachGuard(ctx context.Context, p *popup) error {
	r, err := g.b.c.Target.AttachToTarget(ctx, target.NewAttachToTargetArgs(target.ID(p.id)).SetFlatten(true))
	if err != nil {
		return g.b.fail(err)
	}
	gs := &guardSession{children: map[string]*route{}}
	rules := p.opener.socketRules(g)
	grants := g.localGrants(p.owners())
	conn, rt, err := g.b.m.open(ctx, string(r.SessionID), func(method string, params json.RawMessage) {
		g.observeGuarded(gs, rules, grants, method, params)
	})
	if err != nil {
		return err
	}
	gs.rt = rt
	// Network.enable is answered only once the popup has a document; the
	// commands after it are answered by the browser, and waited for.
	if err = g.b.m.sendOn(rt, "Network.enable", netOn); err == nil {
		err = rpcc.Invoke(ctx, "Network.emulateNetworkConditionsByRule", json.RawMessage(rules), nil, conn)
	}
	if err == nil {
		err = rpcc.Invoke(ctx, "Target.setAutoAttach", autoAttachArgs(false), nil, conn)
	}
	if err != nil {
		g.b.m.drop(rt, ErrDetached)
		return err
	}
	g.mu.Lock()
	g.preGuards[p.id] = gs
	g.mu.Unlock()
	return nil
}

// autoAttachArgs are a guard session's auto-attach: frames and workers,
// or workers only below a worker.
func autoAttachArgs(workers bool) *target.SetAutoAttachArgs {
	f := target.Filter{{Type: ptr("iframe")}, {Type: ptr("worker")}}
	if workers {
		f = workerFilter
	}
	return target.NewSetAutoAttachArgs(true, true).SetFlatten(true).SetFilter(f)
}

// observeGuarded runs on a guard session's (or one of its children's)
// receive goroutine: a frame or worker it attached gets the rules or the
// worker's guard, and runs.
func (g *Gateway) observeGuarded(gs *guardSession, rules []byte, grants []string, method string, params json.RawMessage) {
	switch method {
	case "Target.attachedToTarget":
		var ev target.AttachedToTargetReply
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		conn, rt, err := g.b.m.open(context.Background(), string(ev.SessionID), func(method string, params json.RawMessage) {
			g.observeGuarded(gs, rules, grants, method, params)
		})
		if err != nil {
			return
		}
		gs.mu.Lock()
		gs.children[rt.id] = rt
		gs.mu.Unlock()
		worker := ev.TargetInfo.Type == "worker"
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
			defer cancel()
			c := devtools.NewClient(conn)
			if worker {
				_ = guardWorker(ctx, c, grants)
			} else if g.b.m.sendOn(rt, "Network.enable", netOn) == nil {
				_ = rpcc.Invoke(ctx, "Network.emulateNetworkConditionsByRule", json.RawMessage(rules), nil, conn)
			}
			_ = rpcc.Invoke(ctx, "Target.setAutoAttach", autoAttachArgs(worker), nil, conn)
			_ = c.Runtime.RunIfWaitingForDebugger(ctx)
		}()
	case "Target.detachedFromTarget":
		var ev struct {
			SessionID string `json:"sessionId"`
			TargetID  string `json:"targetId"`
		}
		if json.Unmarshal(params, &ev) == nil {
			gs.mu.Lock()
			delete(gs.children, ev.SessionID)
			gs.mu.Unlock()
			g.b.m.detached(ev.SessionID, ev.TargetID)
		}
	}
}

// takePreGuard hands a popup's guard session to its Tab, which attaches
// the popup's frames and workers itself from then on.
func (g *Gateway) takePreGuard(id string) *guardSession {
	g.mu.Lock()
	gs := g.preGuards[id]
	delete(g.preGuards, id)
	g.mu.Unlock()
	if gs != nil {
		_ = g.b.m.sendOn(gs.rt, "Target.setAutoAttach", []byte(`{"autoAttach":false,"waitForDebuggerOnStart":false}`))
	}
	return gs
}

// release ends a guard session and the sessions it attached.
func (gs *guardSession) release(b *Browser) {
	if gs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
	defer cancel()
	_ = b.c.Target.DetachFromTarget(ctx, target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(gs.rt.id)))
	b.m.drop(gs.rt, ErrDetached)
	gs.mu.Lock()
	var kids []*route
	for _, rt := range gs.children {
		kids = append(kids, rt)
	}
	clear(gs.children)
	gs.mu.Unlock()
	for _, rt := range kids {
		b.m.drop(rt, ErrDetached)
	}
}
