package cdp

import (
	"context"
	"encoding/json"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"
)

// ConsoleHistory returns what the browser kept of the current document's
// console: its console messages, as [Tab.OnConsole] gives them, and its
// uncaught exceptions and unhandled rejections, as [Tab.OnPageError] gives
// them, including those from before the tab was attached. Enabling the
// Runtime domain on a new session makes the browser replay them before it
// answers, so a short second session reads the whole history without
// touching the tab's own. Nothing runs in the page.
func (t *Tab) ConsoleHistory(ctx context.Context) ([]ConsoleMessage, []*EvalError, error) {
	b := t.b
	r, err := b.c.Target.AttachToTarget(ctx, target.NewAttachToTargetArgs(target.ID(t.id)).SetFlatten(true))
	if err != nil {
		return nil, nil, b.fail(err)
	}
	var mu sync.Mutex
	var console []ConsoleMessage
	var exceptions []*EvalError
	observe := func(method string, params json.RawMessage) {
		m, isMsg := consoleMessageOf(method, params)
		e := pageErrorOf(method, params)
		mu.Lock()
		defer mu.Unlock()
		if isMsg {
			console = append(console, m)
		}
		if e != nil {
			exceptions = append(exceptions, e)
		}
	}
	conn, rt, err := b.m.open(ctx, string(r.SessionID), observe)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = b.c.Target.DetachFromTarget(dctx, target.NewDetachFromTargetArgs().SetSessionID(r.SessionID))
		b.m.drop(rt, &DetachedError{TargetID: t.id, Reason: ErrDetached, Detail: "detached by client"})
		<-conn.Context().Done()
	}()
	if err := devtools.NewClient(conn).Runtime.Enable(ctx); err != nil {
		return nil, nil, t.fail(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return console, exceptions, nil
}
