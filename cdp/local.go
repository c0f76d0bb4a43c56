package cdp

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/mafredri/cdp/protocol/page"

	"github.com/tranquil/automation/cdp/sitepolicy"
	"github.com/tranquil/automation/internal/netclass"
)

// Local addresses. A guarded tab (one attached with [TabOptions.Gateway])
// reaches this computer or the local network only when its sites, or the
// policy's AllowLocal, name that host exactly: a service on loopback is no
// ordinary site, and a script that may browse the web has not thereby been
// allowed to read the user's local services. That holds for everything
// the tab's pages load or send: their documents (here), their other
// requests and their workers' (localnet.go), their WebSockets
// (sockets.go), and the pages they open (openers.go). The gateway pauses
// every document request; for one of a guarded tab's frames it grades the
// address (internal/netclass), looks a name up when only DNS can tell, and
// fails the request when the grant is missing. Page actions in a guarded
// tab refuse a local document the same way, by its address (action.go),
// which covers a tab the run did not navigate.
//
// What this does not stop: a name whose answer changes between the
// gateway's lookup and the browser's own (DNS rebinding with a short
// lifetime) is judged by the first answer; page actions judge a document by
// its address's text, not by where its name pointed. A page's other
// requests and its WebSockets are judged by their address's text only
// (a lookup for each would cost every request a round trip): a name that
// resolves to a local address is left to the browser's own rules for
// pages that reach into the local network.

// lookupTimeout bounds the gateway's own lookup of a name a guarded tab
// navigates to. The browser makes the same lookup right after; a resolver
// that does not answer in this time would fail the navigation anyway, and
// the paused request must not wait longer than the page would.
const lookupTimeout = 3 * time.Second

// maxRefusalNotes bounds the refusal reasons kept for Goto to report.
const maxRefusalNotes = 256

// CheckAllowLocal reports the first entry of sites that cannot be a
// [PagePolicy.AllowLocal] entry (a host or host:port, no wildcard), as
// ErrEndpoint.
func CheckAllowLocal(sites []string) error { return checkLocalSites(sites) }

func checkLocalSites(sites []string) error {
	if s, bad := sitepolicy.BadLocalSite(sites); bad {
		return fmt.Errorf("%w: always-allowed local site %q is not a host or host:port", ErrEndpoint, s)
	}
	return nil
}

// localRefusal says why a guarded tab's frame may not load the document
// at raw, or "" when it may: raw is not a local address, the frame is not
// a guarded tab's, or its sites or the policy name the host.
func (g *Gateway) localRefusal(ctx context.Context, frame, raw string) string {
	t, _ := g.knownOwner(frame)
	return g.documentRefusal(ctx, raw, t, func() *Tab { return g.searchOwner(ctx, frame) })
}

// grantRefusal is localRefusal for a document of tab t.
func (g *Gateway) grantRefusal(ctx context.Context, t *Tab, raw string) string {
	return g.documentRefusal(ctx, raw, t, nil)
}

// documentRefusal judges a document's address for guarded tab t, or when
// t is nil for the one search finds (asked only for a local address).
func (g *Gateway) documentRefusal(ctx context.Context, raw string, t *Tab, search func() *Tab) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	class, lookup := netclass.Host(u.Hostname())
	if class == netclass.Public && !lookup {
		return ""
	}
	g.mu.Lock()
	local := g.local
	resolver := g.resolver
	g.mu.Unlock()
	if sitepolicy.Granted(raw, local) {
		return ""
	}
	if lookup {
		// A name: only resolved for a frame that may be a guarded tab's;
		// the lookup is the browser's own next step anyway.
		if t == nil && !g.anyTabs() {
			return ""
		}
		if class = g.lookup(ctx, resolver, u.Hostname()); class == netclass.Public {
			return ""
		}
	}
	if t == nil && search != nil {
		t = search()
	}
	if t == nil || sitepolicy.Granted(raw, t.opts.Sites) {
		return ""
	}
	return localGrant(u, class)
}

// localGrant names the grant that would let a tab load u.
func localGrant(u *url.URL, class netclass.Class) string {
	return sitepolicy.GrantFor(u, class == netclass.Private)
}

// lookup grades a name by the addresses it resolves to: local when any
// is. A name that cannot be looked up is left to the browser, whose own
// lookup will fail the same way.
func (g *Gateway) lookup(ctx context.Context, r Resolver, host string) netclass.Class {
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netclass.Public
	}
	class := netclass.Public
	for _, a := range addrs {
		switch netclass.Addr(a) {
		case netclass.Loopback:
			return netclass.Loopback
		case netclass.Private:
			class = netclass.Private
		}
	}
	return class
}

// anyTabs reports whether the gateway guards any tab.
func (g *Gateway) anyTabs() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.tabs) > 0
}

// knownOwner is the guarded tab whose frame this is, from the frames each
// tab has seen; known is false when none has.
func (g *Gateway) knownOwner(frame string) (t *Tab, known bool) {
	for _, t := range g.guarded() {
		if t.frames.has(frame, false) {
			return t, true
		}
	}
	return nil, false
}

// searchOwner asks the browser for the frames of every guarded tab's
// sessions. A frame attached a moment ago may be in no tab's records yet,
// since each session's events are read on a goroutine of its own; the
// browser's frame tree already holds it.
func (g *Gateway) searchOwner(ctx context.Context, frame string) *Tab {
	ctx, cancel := context.WithTimeout(ctx, defaultCleanupTimeout)
	defer cancel()
	for _, t := range g.guarded() {
		for _, s := range t.frames.allSessions() {
			tree, err := s.c.Page.GetFrameTree(ctx)
			if err == nil && treeHas(tree.FrameTree, frame) {
				return t
			}
		}
	}
	return nil
}

func treeHas(tr page.FrameTree, frame string) bool {
	if string(tr.Frame.ID) == frame {
		return true
	}
	for _, c := range tr.ChildFrames {
		if treeHas(c, frame) {
			return true
		}
	}
	return false
}

func (g *Gateway) guarded() []*Tab {
	g.mu.Lock()
	defer g.mu.Unlock()
	tabs := make([]*Tab, 0, len(g.tabs))
	for t := range g.tabs {
		tabs = append(tabs, t)
	}
	return tabs
}

// refusal is a request the gateway failed.
type refusal struct{ url, reason string }

// noteRefusal keeps why frame's request was refused, for the action that
// caused it to report.
func (g *Gateway) noteRefusal(frame, u, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.refused) >= maxRefusalNotes {
		clear(g.refused)
	}
	g.refused[frame] = refusal{u, reason}
}

// refusalOf takes the refusal noted for frame's latest refused request.
func (g *Gateway) refusalOf(frame string) (refusal, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.refused[frame]
	delete(g.refused, frame)
	return r, ok
}

// gatewayOf is the gateway guarding the tab's browser, or nil.
func (t *Tab) gatewayOf() *Gateway {
	if g := t.opts.Gateway; g != nil {
		return g
	}
	t.b.gmu.Lock()
	defer t.b.gmu.Unlock()
	return t.b.gateway
}

// refusedIn takes the gateway's refusal of frame fr's latest request ("" is
// the main frame), if it noted one.
func (t *Tab) refusedIn(fr string) (refusal, bool) {
	g := t.gatewayOf()
	if g == nil {
		return refusal{}, false
	}
	if fr == "" {
		fr = t.mainFrame()
	}
	return g.refusalOf(fr)
}

// forgetRefusals drops the refusals noted for frame fr and the main frame,
// so that what a click reports afterwards is what it caused.
func (t *Tab) forgetRefusals(fr string) {
	t.refusedIn(fr)
	if fr != "" {
		t.refusedIn("")
	}
}

// clickNavigationRefused turns err, the check that follows a click that
// was sent, into the refusal of the navigation the click started, when
// the check failed because the page now shows the browser's error page
// for a request the gateway refused. Whether the check runs before or
// after that page commits is the browser's timing: the action log records
// the refusal either way.
func (t *Tab) clickNavigationRefused(fr string, err error) error {
	if !refused(err) {
		return err
	}
	if r, ok := t.refusedIn(fr); ok {
		return &NavigationBlockedError{URL: r.url, Reason: r.reason}
	}
	if fr != "" {
		if r, ok := t.refusedIn(""); ok {
			return &NavigationBlockedError{URL: r.url, Reason: r.reason}
		}
	}
	return err
}

// localDocumentGrant says which grant a guarded tab lacks to act on the
// document at where, judged by its address alone (no lookup: a page action
// must not wait on DNS), or "" when it lacks none.
func (t *Tab) localDocumentGrant(where string) string {
	g := t.opts.Gateway
	if g == nil {
		return ""
	}
	g.mu.Lock()
	local := g.local
	g.mu.Unlock()
	return LocalGrant(where, t.opts.Sites, local)
}

// LocalGrant says which grant ("add sites=HOST to reach …") is missing to
// load or read the page at rawURL, judged by its address's text alone,
// with sites and allowLocal granted (see [PagePolicy.AllowLocal]); "" when
// rawURL is no http or https address on this computer or the local
// network, or a grant names its host.
func LocalGrant(rawURL string, sites, allowLocal []string) string {
	return sitepolicy.LocalGrant(rawURL, sites, allowLocal)
}

// navigationTarget describes an address for the action log: its origin and
// path, and of its query only the length, since a query may carry what a
// page or a script put there (a token, a secret read from another page).
// The fragment never leaves the browser and is left out.
func navigationTarget(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "(malformed address)"
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	s := u.Scheme + "://" + u.Host + shorten(u.EscapedPath(), maxLoggedPath)
	if u.RawQuery != "" || u.ForceQuery {
		s += fmt.Sprintf("?… (%d bytes of query)", len(u.RawQuery))
	}
	return s
}

// maxLoggedPath bounds the path an action log entry keeps; longer paths
// are cut, since a page can make its own addresses as long as it likes.
const maxLoggedPath = 200
