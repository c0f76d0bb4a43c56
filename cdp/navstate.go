package cdp

import (
	"sync"
)

// navTracker is the main frame's navigation state: its committed address,
// its documents by loader and the lifecycle states each reached, the
// responses they came with, and the gotos under way. Navigation waits
// (waitState, WaitForURL, a goto's navFollow) keep their own records under
// its lock, and are woken through changed.
//
// Goroutines: the tab's receive goroutine writes it (observe, and the
// navFollow and WaitForURL subscribers, which run there too), as does
// setup; page actions and waits read it on their callers' goroutines, and
// a goto's stopGrace timer on its own. Its lock is a leaf: nothing is
// called, and no other part's lock taken, while mu is held.
type navTracker struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on each change a navigation wait may be waiting for

	url        string                     // the main frame's committed address
	loader     string                     // newest document's loader id
	seq        int                        // counts new documents and same-document navigations
	lifecycle  map[string]map[string]bool // loaderId → lifecycle names seen
	loaders    []string                   // insertion order of lifecycle, to bound it
	actionMark int                        // seq when the latest page action began

	// gotos counts the tab's gotos under way: the main frame's commits
	// meanwhile are theirs, logged as the goto. Others are logged as
	// "navigated" (frames.go).
	gotos int

	// responses holds the main frame's document responses by loader id
	// (response.go).
	responses map[string]Response
	respOrder []string // insertion order, to bound responses
}

func newNavTracker() *navTracker {
	return &navTracker{changed: make(chan struct{}), lifecycle: map[string]map[string]bool{}}
}

// broadcast wakes every navigation wait; call with n.mu held.
func (n *navTracker) broadcast() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// lifecycleEvent records a Page.lifecycleEvent of the main frame; a loader
// not seen before is a new document. Call with n.mu held.
func (n *navTracker) lifecycleEvent(loaderID, name string) {
	seen := n.lifecycle[loaderID]
	if seen == nil {
		seen = map[string]bool{}
		n.lifecycle[loaderID] = seen
		n.loaders = append(n.loaders, loaderID)
		if len(n.loaders) > 16 {
			delete(n.lifecycle, n.loaders[0])
			n.loaders = n.loaders[1:]
		}
		if loaderID != n.loader {
			n.loader = loaderID
			n.seq++
		}
	}
	seen[name] = true
}

// lifecycleSeen records a lifecycle event of the main frame and wakes the
// waits.
func (n *navTracker) lifecycleSeen(loaderID, name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lifecycleEvent(loaderID, name)
	n.broadcast()
}

// attached fills in, once setup has read the frame tree, what no event
// has told yet, and marks the start for WaitNavigated.
func (n *navTracker) attached(loader, url string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.loader == "" {
		n.loader = loader
	}
	if n.url == "" {
		n.url = url
	}
	n.actionMark = n.seq
}

// committed records the main frame's new document at u, and reports
// whether no goto is under way to claim it.
func (n *navTracker) committed(u string) (unclaimed bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.url = u
	n.broadcast()
	return n.gotos == 0
}

// sameDocument records a same-document navigation of the main frame.
func (n *navTracker) sameDocument(u string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	n.url = u
	n.broadcast()
}

// actionBegins marks where a page action starts, for WaitNavigated, and
// returns the address it starts on.
func (n *navTracker) actionBegins() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.actionMark = n.seq
	return n.url
}

// gotoUnderWay counts a goto starting (+1) or ending (-1).
func (n *navTracker) gotoUnderWay(d int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gotos += d
}

// mainURL is the main frame's committed address.
func (n *navTracker) mainURL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.url
}

// mainDoc is the main frame's address and the loader of its newest
// document, read together.
func (n *navTracker) mainDoc() (url, loader string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.url, n.loader
}

// marks are the navigation count now and when the latest page action
// began.
func (n *navTracker) marks() (seq, actionMark int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seq, n.actionMark
}

// response keeps the response a main-frame document came with.
func (n *navTracker) response(loader string, r Response) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.responses == nil {
		n.responses = map[string]Response{}
	}
	if _, seen := n.responses[loader]; !seen {
		n.respOrder = append(n.respOrder, loader)
		if len(n.respOrder) > maxResponses {
			delete(n.responses, n.respOrder[0])
			n.respOrder = n.respOrder[1:]
		}
	}
	n.responses[loader] = r
	n.broadcast()
}

// responseOf returns the recorded response of a loader.
func (n *navTracker) responseOf(loader string) (Response, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.responses[loader]
	return r, ok
}
