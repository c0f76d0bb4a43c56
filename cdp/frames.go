package cdp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/tranquil/automation/errcode"
)

// Frames. A page is a tree of frames: the main frame; frames the same
// renderer runs (same-site iframes), whose realms and events come over the
// tab's own session; and out-of-process frames (cross-site iframes), each
// a target of its own, which the tab attaches automatically with a
// flattened session of their own (and so on down: their cross-site frames
// too). Every frame's documents get the isolated world. A target is
// searched for in every frame whose document the tab's sites allow, and
// an element found is operated in its own frame: runtime calls in that
// frame's world, clicks at its position translated into the page's
// viewport, keys through the page to the frame that has focus.

// session is one protocol session of a tab: the tab's own, or an
// out-of-process frame's.
type session struct {
	id     string
	route  *route
	conn   *rpcc.Conn
	c      *devtools.Client
	root   string   // the frame at its root: the main frame, or the out-of-process frame
	parent *session // the session that attached it; nil for the tab's own
}

// subframe is a frame below the main one, as its session reports it.
type subframe struct {
	id     string
	s      *session
	url    string
	name   string
	seq    int // when it was first seen, for a stable search order
	realms realms
}

// maxSubframes bounds the frames a tab tracks; a page with more is
// searched in the first ones.
const maxSubframes = 256

// autoAttach makes s attach each out-of-process iframe and dedicated
// worker below it, paused until the tab has set it up. (A worker left out
// of the filter would still wait for a debugger, and never run.)
func autoAttach(ctx context.Context, c *devtools.Client) error {
	return c.Target.SetAutoAttach(ctx, target.NewSetAutoAttachArgs(true, true).SetFlatten(true).
		SetFilter(target.Filter{{Type: ptr("iframe")}, {Type: ptr("worker")}}))
}

// observeFrames tracks the tab's frames, their documents and realms, from
// the events of session s: into the frame table (frametree.go), and the
// main frame's address into the navigation's (navstate.go). It runs on
// s's receive goroutine and never blocks.
func (t *Tab) observeFrames(s *session, method string, params json.RawMessage) {
	switch method {
	case "Runtime.executionContextCreated":
		t.onContextCreated(s, params)
	case "Runtime.executionContextDestroyed":
		t.onContextDestroyed(params)
	case "Runtime.executionContextsCleared":
		t.frames.contextsCleared(s)
	case "Page.frameNavigated":
		t.onFrameNavigated(s, params)
	case "Page.frameAttached":
		t.onFrameAttached(s, params)
	case "Page.navigatedWithinDocument":
		t.onSameDocument(s, params)
	case "Page.frameDetached":
		t.onFrameDetached(s, params)
	case "Target.attachedToTarget":
		var ev struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		t.attachFrame(s, ev.SessionID, ev.TargetInfo.TargetID, ev.TargetInfo.Type)
	case "Target.detachedFromTarget":
		var ev struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		t.detachFrame(ev.SessionID, &DetachedError{Reason: ErrDetached, Detail: "frame detached"})
	}
}

// contextInfo is a realm as Runtime.executionContextCreated describes it.
type contextInfo struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Origin   string `json:"origin"`
	UniqueID string `json:"uniqueId"`
	AuxData  struct {
		IsDefault bool   `json:"isDefault"`
		Type      string `json:"type"`
		FrameID   string `json:"frameId"`
	} `json:"auxData"`
}

// onContextCreated records a new realm of a frame: its main world or the
// library's world.
func (t *Tab) onContextCreated(s *session, params json.RawMessage) {
	var ev struct {
		Context contextInfo `json:"context"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	c := &ev.Context
	if c.AuxData.FrameID == "" {
		return
	}
	t.frames.contextCreated(s, c.AuxData.FrameID, s == t.top && c.AuxData.FrameID == t.mainFrame(), c)
}

// onContextDestroyed forgets a realm that went away.
func (t *Tab) onContextDestroyed(params json.RawMessage) {
	var ev struct {
		UniqueID string `json:"executionContextUniqueId"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	t.frames.contextDestroyed(ev.UniqueID)
}

// onFrameNavigated records a frame's committed document, refuses one
// the tab may not show and logs where the page took the tab.
func (t *Tab) onFrameNavigated(s *session, params json.RawMessage) {
	var ev struct {
		Frame struct {
			ID          string  `json:"id"`
			ParentID    string  `json:"parentId"`
			Name        string  `json:"name"`
			URL         string  `json:"url"`
			URLFragment *string `json:"urlFragment"`
		} `json:"frame"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	fr := ev.Frame
	u := frameURL(fr.URL, fr.URLFragment)
	logged := false
	if s == t.top && fr.ParentID == "" {
		logged = t.nav.committed(u)
	} else {
		t.frames.committed(s, fr.ID, u, fr.Name)
	}
	t.frames.note(fr.ID) // for the gateway's refusals, frames.go's too
	if !documentAllowed(u) && u != "about:srcdoc" && !strings.HasPrefix(u, "chrome-error:") {
		t.refuseDocument(s, fr.ID, u)
	} else if logged && u != "about:blank" && documentAllowed(u) && t.opts.Log != nil {
		// A navigation the page made (a link, a form, page code, a
		// redirect after load): where the tab went is the run's record,
		// the query's text is not.
		t.opts.Log(Action{Method: "navigated", Target: navigationTarget(u), Site: hostOf(u), Outcome: "ok"})
	}
}

// onFrameAttached counts a new frame as the tab's before it commits anything.
func (t *Tab) onFrameAttached(s *session, params json.RawMessage) {
	// A new frame's first request may reach the gateway before the
	// frame commits anything: it is this tab's from now on.
	var ev struct {
		FrameID string `json:"frameId"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	t.frames.note(ev.FrameID)
}

// onSameDocument records a same-document navigation (history API,
// fragment).
func (t *Tab) onSameDocument(s *session, params json.RawMessage) {
	var ev struct {
		FrameID string `json:"frameId"`
		URL     string `json:"url"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	if s == t.top && ev.FrameID == t.mainFrame() {
		t.nav.sameDocument(ev.URL)
	} else {
		t.frames.sameDocument(s, ev.FrameID, ev.URL)
	}
}

// onFrameDetached forgets a frame that left the tab.
func (t *Tab) onFrameDetached(s *session, params json.RawMessage) {
	var ev struct {
		FrameID string `json:"frameId"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	t.frames.detached(s, ev.FrameID)
}

// attachFrame takes over the session of an out-of-process frame that s
// attached. The frame waits, paused, until its domains are on and its
// documents will get the isolated world; the setup runs on a goroutine of
// its own, bounded by a timeout, and resumes the frame whatever happens.
func (t *Tab) attachFrame(parent *session, sessionID, targetID, typ string) {
	resume := func(ctx context.Context, c *devtools.Client) {
		ctx, cancel := cleanup(ctx)
		defer cancel()
		_ = c.Runtime.RunIfWaitingForDebugger(ctx)
	}
	cs := &session{id: sessionID, root: targetID, parent: parent}
	if typ == "worker" {
		t.attachWorker(parent, sessionID, targetID) // workers.go
		return
	}
	if typ != "iframe" {
		t.tasks.Go("detach other target", func(ctx context.Context) {
			ctx, cancel := cleanup(ctx)
			defer cancel()
			_ = parent.c.Target.DetachFromTarget(ctx, target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(sessionID)))
		})
		return
	}
	if !t.openSession(cs, func(method string, params json.RawMessage) { t.observeFrames(cs, method, params) }) {
		return // the connection is going; the frame goes with it
	}
	rt := cs.route
	if !t.frames.addSession(cs, t.route.gone) {
		t.b.m.drop(rt, ErrDetached)
		return
	}
	// A frame's session ends with the tab's, which ends before the group
	// stops.
	t.tasks.Go("frame watch", func(context.Context) {
		select {
		case <-t.route.gone:
			t.detachFrame(sessionID, t.route.err)
		case <-rt.gone:
			t.detachFrame(sessionID, rt.err)
		}
	})
	t.tasks.Go("frame setup", func(gctx context.Context) {
		defer resume(gctx, cs.c)
		ctx, cancel := cleanup(gctx)
		defer cancel()
		calls := []func() error{
			func() error { return cs.c.Page.Enable(ctx) },
			func() error { return cs.c.Runtime.Enable(ctx) },
			func() error { return worldOnNewDocuments(ctx, cs.c) },
			func() error { return autoAttach(ctx, cs.c) },
			func() error { return t.guardFrameSockets(cs) },
			func() error { return t.isolatedWorldOn(ctx, cs, targetID) },
		}
		_ = all(calls) // a frame that went meanwhile needs nothing more
	})
}

// detachFrame forgets an out-of-process frame's session, the sessions it
// attached and their frames.
func (t *Tab) detachFrame(sessionID string, why error) {
	if t.dropWorker(sessionID) {
		return
	}
	drop := t.frames.dropSessions(sessionID)
	for _, d := range drop {
		if why == nil {
			why = ErrDetached
		}
		t.b.m.drop(d.route, why)
	}
}

// isolatedWorldOn creates the form runtime's world in a frame's current
// document over session s; a document already gone is not an error.
func (t *Tab) isolatedWorldOn(ctx context.Context, s *session, frame string) error {
	_, err := s.c.Page.CreateIsolatedWorld(ctx, page.NewCreateIsolatedWorldArgs(page.FrameID(frame)).SetWorldName(worldName))
	if err != nil && !contextGone(err) && protocolError(err) == nil {
		return err
	}
	return nil
}

// searchFrames lists the frames a target is looked for in, main frame
// first, then the others in the order they appeared: those with a
// document whose address the tab's sites allow (see [TabOptions]), whose
// name is want or whose address holds it when want is set. skipped counts
// the frames passed over for their site.
func (t *Tab) searchFrames(want string) (frames []string, skipped []string) {
	if want == "" {
		u := t.nav.mainURL()
		if t.opts.Sites == nil || t.frameAllowed(u) {
			frames = append(frames, "")
		} else if h := hostOf(u); h != "" {
			skipped = append(skipped, h)
		}
	}
	for _, f := range t.frames.searchable() {
		if want != "" && f.name != want && !strings.Contains(f.url, want) {
			continue
		}
		if !t.frameAllowed(f.address(t.opts.Sites != nil)) {
			if h := hostOf(f.url); h != "" && len(skipped) < 8 && !slices.Contains(skipped, h) {
				skipped = append(skipped, h)
			}
			continue
		}
		frames = append(frames, f.id)
	}
	return frames, skipped
}

// frameAddress is the address frame fr is judged by: the main frame's
// own for "", frameSeen.address for a subframe, "" for a frame gone.
func (t *Tab) frameAddress(fr string) string {
	if fr == "" {
		return t.nav.mainURL()
	}
	if f, ok := t.frames.subframe(fr); ok {
		return f.address(t.opts.Sites != nil)
	}
	return ""
}

// frameAllowed reports whether page actions may run in a frame at u: with
// sites, a document on one of them; without, any web document or a blank
// one.
func (t *Tab) frameAllowed(u string) bool {
	if t.opts.Sites != nil {
		return SiteAllowed(u, t.opts.Sites)
	}
	return documentAllowed(u) || u == "about:srcdoc"
}

// frameOfRef is the frame a ref of the form runtime was made in: refs
// carry their document's id before the colon.
func (t *Tab) frameOfRef(ref string) string {
	doc, ok := docOfRef(ref)
	if !ok {
		return ""
	}
	return t.frames.ofRef(doc)
}

// noteRef records which frame made ref.
func (t *Tab) noteRef(fr, ref string) {
	if fr == "" {
		return
	}
	if doc, ok := docOfRef(ref); ok {
		t.frames.noteRef(doc, fr)
	}
}

// sessionOf is the session frame fr's realms and nodes are reached on.
func (t *Tab) sessionOf(fr string) *session { return t.frames.sessionOf(fr) }

// pagePoint turns (x, y), in CSS pixels of frame fr's viewport, into the
// page's viewport, where input is sent: it adds the position of each
// enclosing frame's content box, as the browser lays it out. The point
// must then be inside the page's viewport and reach the frame there: an
// element of the page in front of the frame is errcode.Obscured. A point the
// page does not show is scrolled into view, and errNotInPage asks the
// caller to look again.
func (t *Tab) pagePoint(ctx context.Context, fr string, x, y float64) (float64, float64, error) {
	if fr == "" {
		return x, y, nil
	}
	s := t.sessionOf(fr)
	if s == nil {
		return 0, 0, &LocatorError{Code: errcode.StaleRef, Message: "the frame is gone; resolve the target again"}
	}
	// Box models come in the viewport of the session's root frame. top is
	// the element of the main frame's session that holds the frame, or
	// the frame that leads to it.
	var top ownerBox
	if fr != s.root {
		o, err := t.ownerBoxOf(ctx, s, fr)
		if err != nil {
			return 0, 0, err
		}
		x, y, top = x+o.x, y+o.y, o
	}
	for ; s.parent != nil; s = s.parent {
		o, err := t.ownerBoxOf(ctx, s.parent, s.root)
		if err != nil {
			return 0, 0, err
		}
		x, y, top = x+o.x, y+o.y, o
	}
	m, err := t.c.Page.GetLayoutMetrics(ctx)
	if err != nil {
		return 0, 0, t.fail(err)
	}
	if x < 0 || y < 0 || x >= float64(m.CSSLayoutViewport.ClientWidth) || y >= float64(m.CSSLayoutViewport.ClientHeight) {
		// The frame shows the point, the page does not: scroll that part
		// of the frame's element into the page's view.
		const margin = 16
		rect := dom.Rect{X: x - top.borderX - margin, Y: y - top.borderY - margin, Width: 2 * margin, Height: 2 * margin}
		if err := t.c.DOM.ScrollIntoViewIfNeeded(ctx, dom.NewScrollIntoViewIfNeededArgs().
			SetBackendNodeID(top.node).SetRect(rect)); err != nil && protocolError(err) == nil {
			return 0, 0, t.fail(err)
		}
		return 0, 0, errNotInPage
	}
	// DOM.getNodeForLocation takes the point in the document, scrolled.
	hit, err := t.c.DOM.GetNodeForLocation(ctx, dom.NewGetNodeForLocationArgs(int(x+float64(m.CSSLayoutViewport.PageX)), int(y+float64(m.CSSLayoutViewport.PageY))).
		SetIncludeUserAgentShadowDOM(true).SetIgnorePointerEventsNone(true))
	if err != nil {
		if protocolError(err) != nil {
			return 0, 0, errNotInPage
		}
		return 0, 0, t.fail(err)
	}
	// In the main frame's session the hit is the frame's own document (a
	// frame of the same renderer) or the element holding the first frame
	// of another renderer.
	if (t.sessionOf(fr) == t.top && string(hit.FrameID) != fr) || (t.sessionOf(fr) != t.top && hit.BackendNodeID != top.node) {
		return 0, 0, &LocatorError{Code: errcode.Obscured, Message: "the page in front of the frame covers it"}
	}
	return x, y, nil
}

// errNotInPage is a point of a frame that the page around it did not
// show; it has been scrolled into view, and is to be checked again.
var errNotInPage = &LocatorError{Code: errcode.NotStable, Message: "the frame shows the element but the page around it does not; scrolling it into view"}

// ownerBox is where the element holding a frame is, in the viewport of
// its session's root frame: its content box's top left, where the
// frame's viewport starts, and its border box's.
type ownerBox struct {
	node             dom.BackendNodeID
	x, y             float64
	borderX, borderY float64
}

func (t *Tab) ownerBoxOf(ctx context.Context, s *session, frame string) (ownerBox, error) {
	gone := &LocatorError{Code: errcode.StaleRef, Message: "the frame is gone; resolve the target again"}
	o, err := s.c.DOM.GetFrameOwner(ctx, dom.NewGetFrameOwnerArgs(page.FrameID(frame)))
	if err != nil {
		if protocolError(err) != nil {
			return ownerBox{}, gone
		}
		return ownerBox{}, t.fail(err)
	}
	hidden := &LocatorError{Code: errcode.Hidden, Message: "the frame holding it is not rendered"}
	bm, err := s.c.DOM.GetBoxModel(ctx, dom.NewGetBoxModelArgs().SetBackendNodeID(o.BackendNodeID))
	if err != nil {
		if protocolError(err) != nil {
			return ownerBox{}, hidden
		}
		return ownerBox{}, t.fail(err)
	}
	c, b := bm.Model.Content, bm.Model.Border
	if len(c) < 2 || len(b) < 2 {
		return ownerBox{}, hidden
	}
	return ownerBox{node: o.BackendNodeID, x: c[0], y: c[1], borderX: b[0], borderY: b[1]}, nil
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
