package cdp

import (
	"sort"
	"strings"
	"sync"
)

// frameTree is a tab's table of frames and sessions: the main frame's
// realms, the frames below it with their documents and realms, the
// out-of-process frames' sessions, the frames the tab has seen at all, and
// which frame made each runtime ref. The main frame's address is the
// navigation's (navTracker).
//
// Goroutines: the receive goroutines of the tab's session and of its
// out-of-process frames' sessions write it (observeFrames), as do setup
// and the tab's frame watch tasks (detachFrame); page actions read it on
// their callers' goroutines, and the gateway on its own (knownOwner,
// searchOwner, hasFrame). Its lock is a leaf: nothing is called, and no
// other part's lock taken, while mu is held.
type frameTree struct {
	mu      sync.Mutex
	top     *session      // the tab's own session, which reports the main frame
	changed chan struct{} // closed and replaced when a realm or a frame changes (realmIn waits on it)
	realms  realms        // the main frame's
	// known holds the frames of this tab seen attaching or committing, for
	// the gateway's refusals and its search for a frame's tab.
	known     map[string]bool
	subframes map[string]*subframe // frames below the main one, by frame id
	sessions  map[string]*session  // out-of-process frames' sessions, by session id
	refDocs   map[string]string    // document id of a runtime ref → the subframe it was made in
	seq       int                  // numbers subframes as they are first seen
}

// maxKnownFrames bounds the frames a tab remembers seeing.
const maxKnownFrames = 1024

func newFrameTree(top *session, main string) *frameTree {
	return &frameTree{
		top: top, changed: make(chan struct{}), known: map[string]bool{main: true},
		subframes: map[string]*subframe{}, sessions: map[string]*session{}, refDocs: map[string]string{},
	}
}

// broadcastLocked wakes every realm wait; call with ft.mu held.
func (ft *frameTree) broadcastLocked() {
	close(ft.changed)
	ft.changed = make(chan struct{})
}

// subframeLocked returns the frame id's entry, making one for a frame of s
// not seen before; nil when there are too many. Call with ft.mu held.
func (ft *frameTree) subframeLocked(s *session, id string) *subframe {
	f := ft.subframes[id]
	if f == nil {
		if len(ft.subframes) >= maxSubframes {
			return nil
		}
		ft.seq++
		f = &subframe{id: id, s: s, seq: ft.seq}
		ft.subframes[id] = f
	}
	return f
}

// setMain records the main frame's id as setup learned it, and the
// frames the renderer made before attach, whose realms are replayed but
// whose addresses are not.
func (ft *frameTree) setMain(main string, before []frameSeen) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.top.root = main
	for _, b := range before {
		if f := ft.subframeLocked(ft.top, b.id); f != nil && f.url == "" {
			f.url, f.name = b.url, b.name
		}
	}
}

// contextCreated records a realm of frame, reported by s; main says it is
// the main frame's.
func (ft *frameTree) contextCreated(s *session, frame string, main bool, c *contextInfo) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if main {
		ft.realms.created(c.AuxData.IsDefault, c.AuxData.Type, c.Name, c.UniqueID, c.Origin, c.ID)
		ft.broadcastLocked()
	} else if f := ft.subframeLocked(s, frame); f != nil {
		f.s = s // a frame that moved to its own process reports from there
		f.realms.created(c.AuxData.IsDefault, c.AuxData.Type, c.Name, c.UniqueID, c.Origin, c.ID)
		ft.broadcastLocked()
	}
}

// contextDestroyed forgets the realm uid, whichever frame's it was.
func (ft *frameTree) contextDestroyed(uid string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.realms.destroyed(uid)
	for _, f := range ft.subframes {
		f.realms.destroyed(uid)
	}
	ft.broadcastLocked()
}

// contextsCleared forgets every realm of session s.
func (ft *frameTree) contextsCleared(s *session) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if s == ft.top {
		ft.realms.clear()
	}
	for _, f := range ft.subframes {
		if f.s == s {
			f.realms.clear()
		}
	}
	ft.broadcastLocked()
}

// note counts frame as the tab's, committed or not.
func (ft *frameTree) note(frame string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if len(ft.known) < maxKnownFrames {
		ft.known[frame] = true
	}
}

// committed records the document a subframe reported by s committed.
func (ft *frameTree) committed(s *session, frame, u, name string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if f := ft.subframeLocked(s, frame); f != nil {
		f.s, f.url, f.name = s, u, name
		ft.broadcastLocked()
	}
}

// sameDocument records a subframe's same-document navigation, when s
// reports the frame.
func (ft *frameTree) sameDocument(s *session, frame, u string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if f := ft.subframes[frame]; f != nil && f.s == s {
		f.url = u
	}
}

// detached forgets a subframe that left the tab. A frame moving to its own
// process is detached by its old session after its new session may have
// reported it: only s's entry goes.
func (ft *frameTree) detached(s *session, frame string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if f := ft.subframes[frame]; f != nil && f.s == s {
		delete(ft.subframes, frame)
		ft.broadcastLocked()
	}
}

// addSession records an out-of-process frame's session, unless the tab's
// own session is gone; false then.
func (ft *frameTree) addSession(cs *session, gone <-chan struct{}) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	select {
	case <-gone:
		return false
	default:
	}
	ft.sessions[cs.id] = cs
	return true
}

// dropSessions forgets an out-of-process frame's session, the sessions it
// attached and their frames, and returns the sessions forgotten.
func (ft *frameTree) dropSessions(sessionID string) []*session {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	cs := ft.sessions[sessionID]
	if cs == nil {
		return nil
	}
	drop := []*session{cs}
	for i := 0; i < len(drop); i++ {
		delete(ft.sessions, drop[i].id)
		for _, o := range ft.sessions {
			if o.parent == drop[i] {
				drop = append(drop, o)
			}
		}
	}
	for id, f := range ft.subframes {
		for _, d := range drop {
			if f.s == d {
				delete(ft.subframes, id)
			}
		}
	}
	ft.broadcastLocked()
	return drop
}

// allSessions is the tab's own session and its out-of-process frames'.
func (ft *frameTree) allSessions() []*session {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	out := []*session{ft.top}
	for _, s := range ft.sessions {
		out = append(out, s)
	}
	return out
}

// frameSeen is a subframe as a search sees it, copied out under the lock.
type frameSeen struct {
	id, name, url string
	mainOrigin    string // its main world's origin, as the browser reports it
}

// address is the address a subframe is judged by against the tab's sites
// (sited): its own, except that a document its parent wrote (srcdoc,
// about:blank) runs on the parent's origin (or an opaque one, when
// sandboxed), which the browser reports.
func (f frameSeen) address(sited bool) string {
	if (f.url == "about:srcdoc" || f.url == "about:blank") && sited {
		return f.mainOrigin
	}
	return f.url
}

func seenOf(f *subframe) frameSeen {
	return frameSeen{id: f.id, name: f.name, url: f.url, mainOrigin: f.realms.mainOrigin}
}

// searchable lists the subframes with a document and a main world, in
// the order they appeared.
func (ft *frameTree) searchable() []frameSeen {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if len(ft.subframes) == 0 {
		return nil
	}
	subs := make([]*subframe, 0, len(ft.subframes))
	for _, f := range ft.subframes {
		if f.realms.mainCtx != "" && f.url != "" {
			subs = append(subs, f)
		}
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].seq < subs[j].seq })
	out := make([]frameSeen, len(subs))
	for i, f := range subs {
		out[i] = seenOf(f)
	}
	return out
}

// subframe is frame fr as it is now; ok is false for a frame gone.
func (ft *frameTree) subframe(fr string) (f frameSeen, ok bool) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if sf := ft.subframes[fr]; sf != nil {
		return seenOf(sf), true
	}
	return frameSeen{}, false
}

// has reports whether frame is one of the tab's: seen attaching or
// committing, or (with tracked) a subframe it tracks now.
func (ft *frameTree) has(frame string, tracked bool) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.known[frame] || tracked && ft.subframes[frame] != nil
}

// anyOn reports whether a subframe shows a document on origin o.
func (ft *frameTree) anyOn(o string) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	for _, f := range ft.subframes {
		if originOf(f.url) == o {
			return true
		}
	}
	return false
}

// ofRef is the subframe whose document id is doc, "" when none is noted.
func (ft *frameTree) ofRef(doc string) string {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.refDocs[doc]
}

// noteRef records that subframe fr's document is doc.
func (ft *frameTree) noteRef(doc, fr string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if len(ft.refDocs) >= 4096 {
		clear(ft.refDocs) // refs of long-gone documents; new ones are made on demand
	}
	ft.refDocs[doc] = fr
}

// sessionOf is the session frame fr's realms and nodes are reached on;
// nil for a frame gone.
func (ft *frameTree) sessionOf(fr string) *session {
	if fr == "" {
		return ft.top
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if f := ft.subframes[fr]; f != nil {
		return f.s
	}
	return nil
}

// realm reads frame fr's realm w ("" is the main frame) and the channel
// its next change closes; ok is false when the frame is gone.
func (ft *frameTree) realm(fr string, w world) (rm realmRef, main string, ok bool, changed <-chan struct{}) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if fr == "" {
		return ft.realms.ref(w, ft.top), ft.realms.mainCtx, true, ft.changed
	}
	f := ft.subframes[fr]
	if f == nil {
		return rm, "", false, ft.changed
	}
	return f.realms.ref(w, f.s), f.realms.mainCtx, true, ft.changed
}

// setJudge keeps judge as the main world's, if uid is still that world.
func (ft *frameTree) setJudge(uid, judge string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.realms.mainCtx == uid && ft.realms.judge == "" {
		ft.realms.judge = judge
	}
}

// forgetJudge drops judge if it is still the main world's.
func (ft *frameTree) forgetJudge(judge string) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.realms.judge == judge {
		ft.realms.judge = ""
	}
}

// docOfRef is the document id a runtime ref carries before its colon.
func docOfRef(ref string) (string, bool) {
	doc, _, ok := strings.Cut(ref, ":")
	return doc, ok
}
