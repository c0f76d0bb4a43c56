package cdp

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/mafredri/cdp/protocol/fetch"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/tranquil/automation/cdp/sitepolicy"
	"github.com/tranquil/automation/internal/netclass"
)

// Requests a guarded tab's pages make to local addresses (local.go): their
// images, scripts, fetch and XHR calls, frames, workers' requests, beacons
// and prefetches. The gateway has the browser pause every request whose
// address may name a local host by its text (localRequestPatterns), the
// browser's own reading of the address being what it reports (127.1,
// 2130706433 and 0x7f000001 arrive as 127.0.0.1, [::ffff:127.0.0.1] as
// [::ffff:7f00:1]); it grades the host (netclass) and fails the request
// when it is a guarded tab's and the grant is missing. Requests to other
// hosts, the web's, are never paused: a pause costs a round trip through
// the browser process. WebSockets, which the browser does not pause, are
// held to the same grants by sockets.go.
//
// Whose request it is: a frame's or a dedicated worker's request names
// the frame; a shared or service worker's names the worker, which is the
// guarded tabs' whose documents are on the worker's origin; a popup's
// names the popup, which is its opener's (openers.go).

// localHostPrefixes are the starts of the hosts a browser writes for
// local addresses, as Fetch patterns: ? is one character, * any run.
var localHostPrefixes = []string{
	"127.", "0.", "10.", "192.168.", "169.254.", "172.1?.", "172.2?.", "172.3?.",
	"100.6?.", "100.7?.", "100.8?.", "100.9?.", "100.1??.", "[", "localhost",
}

// localNameSuffixes are the name endings only this computer or a local
// network answers.
var localNameSuffixes = []string{".localhost", ".local", ".internal", ".lan", ".home.arpa"}

// localRequestPatterns are the requests of any kind whose host may be a
// local address by its text: each prefix right after "://" or a user name's
// "@", and each suffix before the port or the path, with or without a
// trailing dot. They match some other addresses too (127.example.com, a
// path ending in .local), which are paused and let go; a single-word name
// (http://router/) cannot be written as a pattern, and is held off by the
// socket rules instead (sockets.go).
func localRequestPatterns() []fetch.RequestPattern {
	var ps []fetch.RequestPattern
	add := func(p string) { ps = append(ps, fetch.RequestPattern{URLPattern: ptr(p)}) }
	for _, p := range localHostPrefixes {
		add("*://" + p + "*")
		add("*@" + p + "*")
	}
	for _, s := range localNameSuffixes {
		for _, end := range []string{"/*", ":*", "./*", ".:*"} {
			add("*" + s + end)
		}
	}
	return ps
}

// subresourceRefusal says why a request other than a document may not go,
// or "" when it may: its host is not local by its text, a grant names it,
// or no guarded tab made it. A name is not looked up: a lookup for every
// request to a name would cost the web's requests a round trip each.
func (g *Gateway) subresourceRefusal(ctx context.Context, frame, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	class, _ := netclass.Host(u.Hostname())
	if class == netclass.Public {
		return ""
	}
	g.mu.Lock()
	local := g.local
	g.mu.Unlock()
	if sitepolicy.Granted(raw, local) {
		return ""
	}
	for _, t := range g.ownersOf(ctx, frame) {
		if !sitepolicy.Granted(raw, t.opts.Sites) {
			return localGrant(u, class)
		}
	}
	return ""
}

// ownersOf are the guarded tabs a request of frame (a frame id, or a
// worker's or popup's target id) is made for; none for a page no run
// drives.
func (g *Gateway) ownersOf(ctx context.Context, frame string) []*Tab {
	if t, ok := g.knownOwner(frame); ok {
		return []*Tab{t}
	}
	g.mu.Lock()
	owners, isWorker := g.workers[frame]
	p := g.popups[frame]
	g.mu.Unlock()
	switch {
	case isWorker:
		return owners
	case p != nil:
		return p.owners()
	}
	if t := g.searchOwner(ctx, frame); t != nil {
		return []*Tab{t}
	}
	// A target the gateway has not heard of yet: a worker that started a
	// moment ago, or a popup whose creation is still on its way.
	cctx, cancel := context.WithTimeout(ctx, defaultCleanupTimeout)
	defer cancel()
	r, err := g.b.c.Target.GetTargetInfo(cctx, target.NewGetTargetInfoArgs().SetTargetID(target.ID(frame)))
	if err != nil {
		return nil
	}
	switch info := r.TargetInfo; info.Type {
	case "shared_worker", "service_worker":
		return g.tabsOnOrigin(originOf(info.URL))
	case "page":
		if p := g.popupOf(info); p != nil {
			return p.owners()
		}
	}
	return nil
}

// tabsOnOrigin are the guarded tabs with a document on origin o now: a
// shared or service worker of o serves them.
func (g *Gateway) tabsOnOrigin(o string) []*Tab {
	if o == "" {
		return nil
	}
	var out []*Tab
	for _, t := range g.guarded() {
		if t.onOrigin(o) {
			out = append(out, t)
		}
	}
	return out
}

// onOrigin reports whether one of the tab's frames shows a document on
// origin o.
func (t *Tab) onOrigin(o string) bool {
	return originOf(t.nav.mainURL()) == o || t.frames.anyOn(o)
}

// localGrants are the local hosts the tab may reach: the policy's and its
// own sites that name a host exactly.
func (g *Gateway) localGrants(owners []*Tab) []string {
	g.mu.Lock()
	grants := append([]string(nil), g.local...)
	g.mu.Unlock()
	if len(owners) == 0 {
		return grants
	}
	// A worker serving several tabs may reach what all of them may.
	for _, s := range owners[0].opts.Sites {
		if strings.HasPrefix(s, "*.") {
			continue
		}
		all := true
		for _, o := range owners[1:] {
			all = all && slices.Contains(o.opts.Sites, s)
		}
		if all {
			grants = append(grants, s)
		}
	}
	return grants
}
