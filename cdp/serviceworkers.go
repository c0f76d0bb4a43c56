package cdp

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/serviceworker"
)

// Service workers outlive the page that registered them: a worker a page
// registered in one tab answers every later request of its scope, in any
// tab, for as long as the profile keeps it. [TabOptions.RefuseServiceWorkers]
// has a tab unregister each registration that appears on a site its
// documents were on while it was attached, as soon as the browser reports
// it and once more when the tab detaches or closes: at once, not at the
// session's end, so that no other tab is served by the worker meanwhile.
// Storage.clearDataForOrigin is not used: it would also drop the site's
// registrations from before the run, which are the user's.

// swState is a tab's view of the browser's service worker registrations.
type swState struct {
	mu       sync.Mutex
	replayed bool            // the replay that follows ServiceWorker.enable has come
	existing map[string]bool // registrations the replay reported: there before the tab
	refused  map[string]bool // registrations this tab unregistered
	origins  map[string]bool // origins the tab's frames committed documents on
	events   chan struct{}   // closed and replaced on each registration event
	pending  sync.WaitGroup  // unregistrations under way
}

// maxSWOrigins bounds the origins a tab remembers; a tab that has been
// on more sites than this starts over with the newest.
const maxSWOrigins = 256

// swSweepWait bounds how long Detach and Close wait for the browser's
// list of registrations before the session ends.
const swSweepWait = 2 * time.Second

// watchServiceWorkers turns on the ServiceWorker domain, whose events
// (the current registrations first, then every change) arrive through
// observeExt.
func (t *Tab) watchServiceWorkers(ctx context.Context) error {
	current := originOf(t.nav.mainURL()) // the document the tab showed when attached
	sw := &t.sw
	sw.mu.Lock()
	sw.existing, sw.refused, sw.events = map[string]bool{}, map[string]bool{}, make(chan struct{})
	if sw.origins == nil {
		sw.origins = map[string]bool{}
	}
	if current != "" {
		sw.origins[current] = true
	}
	sw.mu.Unlock()
	return t.c.ServiceWorker.Enable(ctx)
}

// swFrameNavigated remembers the origin of a document a frame committed.
func (t *Tab) swFrameNavigated(params json.RawMessage) {
	var ev struct {
		Frame struct {
			URL string `json:"url"`
		} `json:"frame"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	o := originOf(ev.Frame.URL)
	if o == "" {
		return
	}
	sw := &t.sw
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.origins == nil || len(sw.origins) >= maxSWOrigins {
		sw.origins = map[string]bool{}
	}
	sw.origins[o] = true
}

// swRegistrations handles ServiceWorker.workerRegistrationUpdated: the
// first is the replay of what existed; any registration after it on an
// origin of the tab's documents is unregistered.
func (t *Tab) swRegistrations(params json.RawMessage) {
	var ev serviceworker.WorkerRegistrationUpdatedReply
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	sw := &t.sw
	sw.mu.Lock()
	if sw.events == nil {
		sw.mu.Unlock()
		return // not watching
	}
	close(sw.events)
	sw.events = make(chan struct{})
	var refuse []string
	for _, r := range ev.Registrations {
		id := string(r.RegistrationID)
		switch {
		case !sw.replayed:
			sw.existing[id] = true
		case r.IsDeleted || sw.existing[id] || sw.refused[id] || !sw.origins[originOf(r.ScopeURL)]:
		default:
			sw.refused[id] = true
			refuse = append(refuse, r.ScopeURL)
		}
	}
	sw.replayed = true
	sw.pending.Add(len(refuse))
	sw.mu.Unlock()
	for _, scope := range refuse {
		t.tasks.Go("service worker unregistration", func(ctx context.Context) { t.unregisterServiceWorker(ctx, scope) })
	}
}

// unregisterServiceWorker removes the registration of scope and logs the
// refusal. New documents no longer match it at once; pages it already
// controls keep it until they go.
func (t *Tab) unregisterServiceWorker(ctx context.Context, scope string) {
	defer t.sw.pending.Done()
	ctx, cancel := cleanup(ctx)
	defer cancel()
	outcome := "refused"
	if err := t.c.ServiceWorker.Unregister(ctx, serviceworker.NewUnregisterArgs(scope)); err != nil {
		outcome = outcomeOf(t.fail(err))
	}
	if t.opts.Log != nil {
		t.opts.Log(Action{Method: "serviceWorker", Target: addressOf(scope), Site: hostOf(scope), Outcome: outcome})
	}
}

// sweepServiceWorkers asks the browser for its registrations once more
// (a registration can be reported after the last page action) and waits
// until those the tab refuses are unregistered. Detach and Close call it
// before the session ends.
func (t *Tab) sweepServiceWorkers(ctx context.Context) {
	sw := &t.sw
	sw.mu.Lock()
	events := sw.events
	sw.mu.Unlock()
	if events == nil || t.Err() != nil || t.strandedDialog() {
		return // nothing to ask, or a session to leave alone (see Detach)
	}
	ctx, cancel := context.WithTimeout(ctx, swSweepWait)
	defer cancel()
	if t.c.ServiceWorker.Disable(ctx) == nil && t.c.ServiceWorker.Enable(ctx) == nil {
		select {
		case <-events: // the replay, handled like any report
		case <-ctx.Done():
		}
	}
	sw.pending.Wait()
}

// originOf is scheme://host[:port] of an http or https address; "" for
// anything else.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
