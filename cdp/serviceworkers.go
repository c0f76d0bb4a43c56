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
//
// Goroutines: the tab's receive goroutine records the origins its
// documents commit on and the browser's registration reports, the tab's
// unregistration tasks count themselves done, and Detach and Close wait
// for them on the caller's goroutine. Its lock is a leaf: nothing is
// called, and no other part's lock taken, while mu is held.
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
	t.sw.watch(originOf(t.nav.mainURL())) // the document the tab showed when attached
	return t.c.ServiceWorker.Enable(ctx)
}

// watch starts recording, with the origin of the tab's current document.
func (sw *swState) watch(current string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.existing, sw.refused, sw.events = map[string]bool{}, map[string]bool{}, make(chan struct{})
	if sw.origins == nil {
		sw.origins = map[string]bool{}
	}
	if current != "" {
		sw.origins[current] = true
	}
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
	if o := originOf(ev.Frame.URL); o != "" {
		t.sw.committed(o)
	}
}

// committed remembers an origin a document of the tab committed on.
func (sw *swState) committed(o string) {
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
	for _, scope := range t.sw.update(ev.Registrations) {
		t.tasks.Go("service worker unregistration", func(ctx context.Context) { t.unregisterServiceWorker(ctx, scope) })
	}
}

// update takes a registration report, wakes the sweep waiting for one,
// and returns the scopes to unregister, each counted in pending. It
// takes none while the tab is not watching.
func (sw *swState) update(regs []serviceworker.Registration) (refuse []string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.events == nil {
		return nil // not watching
	}
	close(sw.events)
	sw.events = make(chan struct{})
	for _, r := range regs {
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
	return refuse
}

// reports is the channel the next registration report closes; nil while
// the tab is not watching.
func (sw *swState) reports() <-chan struct{} {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.events
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
	events := t.sw.reports()
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
	t.sw.pending.Wait()
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
