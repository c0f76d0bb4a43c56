package cdp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/browser"
	"github.com/mafredri/cdp/protocol/fetch"
	"github.com/mafredri/cdp/protocol/network"

	"github.com/tranquil/automation/cdp/sitepolicy"
)

// SiteAllowed reports whether the page at rawURL is on one of sites, by
// the rule [sitepolicy.Allowed] states: a site is a hostname
// ("example.com") or a wildcard ("*.example.com", any subdomain), with an
// optional port the page's must then equal; only http and https pages
// match.
func SiteAllowed(rawURL string, sites []string) bool {
	return sitepolicy.Allowed(rawURL, sites)
}

// PagePolicy is what the pages of a guarded browser may reach. The zero
// value still allows only http and https requests, denies downloads and
// refuses the browser's own DevTools endpoint.
type PagePolicy struct {
	// Deny lists loopback endpoints ("127.0.0.1:PORT" or just the port)
	// that no request of any page may reach, such as the script bridge and
	// the DevTools endpoints of other browsers the host drives. The
	// browser's own DevTools port, when it has one, is always denied.
	Deny []string
	// AllowLocal lists the local addresses every guarded tab may reach, as
	// "host" (any port) or "host:port": the host application's own
	// development server, say. A guarded tab (one attached with
	// [TabOptions.Gateway]) does not reach this computer or the local
	// network (loopback, link-local and private ranges, localhost names,
	// and for documents names that resolve there) unless this list or the
	// tab's own [TabOptions.Sites] names its host exactly, read as the
	// browser reads hosts (127.1 is 127.0.0.1; [::ffff:127.0.0.1] is too); a
	// wildcard site does not count. That holds for the tab's documents,
	// their other requests, workers and WebSockets, and its popups. Nil
	// allows none. An entry that is not a host or host:port is ErrEndpoint.
	AllowLocal []string
	// Resolver looks up the names a guarded tab navigates to that are
	// neither IP literals nor local by their text, to tell whether they
	// point at a local address. Nil uses net.DefaultResolver.
	Resolver Resolver
}

// Resolver looks up a host name's addresses, as *net.Resolver does.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Gateway enforces a [PagePolicy] on every request of every page of one
// browser connection, subframes, popups and workers included, before the
// request is sent: the browser pauses each request that is not plain http
// or https, that names a denied port, that loads a document, or whose
// address may be local by its text (the Fetch domain, enabled on the
// browser session), and the gateway lets it go or fails it; a request a
// guarded tab may not make is one to this computer or the local network
// that its sites do not name (see [PagePolicy.AllowLocal]). It also denies
// downloads, and has the browser attach every new target before it runs
// (on a browser session of its own), so that a guarded tab's popups and
// the shared and service workers serving it are held to the same grants.
//
// A Gateway owns one goroutine that reads paused requests and short-lived
// ones that answer them and take new targets; [Gateway.Close] stops them,
// and they stop by themselves when the browser connection ends.
type Gateway struct {
	b      *Browser
	cancel context.CancelFunc
	done   chan struct{}
	wg     sync.WaitGroup

	mu        sync.Mutex
	ports     map[int]bool      // denied ports on loopback or behind a host name
	tabs      map[*Tab]struct{} // tabs told about refusals in their frames
	refs      int               // Guard calls not yet closed
	local     []string          // PagePolicy.AllowLocal of every Guard
	resolver  Resolver
	refused   map[string]refusal       // frame id → its latest refused request
	popups    map[string]*popup        // target id → a page a guarded tab opened (openers.go)
	preGuards map[string]*guardSession // popup target id → its guard session, until its Tab takes it
	workers   map[string][]*Tab        // shared and service workers' target ids → the guarded tabs they serve (workers.go)
	targets   *route                   // the gateway's own browser session, which attaches new targets (workers.go)
	tc        *devtools.Client         // its client
	stopped   bool                     // Close has begun: no goroutine starts
}

// Guard starts enforcing p on b and returns once the browser pauses every
// request for it. A connection has one gateway: guarding it again adds p's
// denials to the running one and returns it. Each Guard needs its own
// Close; the last one stops the gateway. A deny entry that is not a
// loopback endpoint is ErrEndpoint.
func Guard(ctx context.Context, b *Browser, p PagePolicy) (*Gateway, error) {
	b.gmu.Lock()
	defer b.gmu.Unlock()
	if g := b.gateway; g != nil && b.Err() == nil {
		ports, err := denyPorts(p)
		if err != nil {
			return nil, err
		}
		if err := checkLocalSites(p.AllowLocal); err != nil {
			return nil, err
		}
		g.mu.Lock()
		g.local = append(g.local, p.AllowLocal...)
		if g.resolver == nil {
			g.resolver = p.Resolver
		}
		grew := false
		for n := range ports {
			grew = grew || !g.ports[n]
			g.ports[n] = true
		}
		patterns := g.patternsLocked()
		g.mu.Unlock()
		if grew {
			if err := b.c.Fetch.Enable(ctx, fetch.NewEnableArgs().SetPatterns(patterns)); err != nil {
				return nil, b.fail(err)
			}
		}
		g.mu.Lock()
		g.refs++
		g.mu.Unlock()
		return g, nil
	}
	g, err := startGateway(ctx, b, p)
	if err != nil {
		return nil, err
	}
	b.gateway = g
	return g, nil
}

func denyPorts(p PagePolicy) (map[int]bool, error) {
	ports := map[int]bool{}
	for _, d := range p.Deny {
		port, err := denyPort(d)
		if err != nil {
			return nil, err
		}
		ports[port] = true
	}
	return ports, nil
}

func startGateway(ctx context.Context, b *Browser, p PagePolicy) (*Gateway, error) {
	ports, err := denyPorts(p)
	if err != nil {
		return nil, err
	}
	if err := checkLocalSites(p.AllowLocal); err != nil {
		return nil, err
	}
	if u, err := url.Parse(b.url); err == nil && u.Port() != "" {
		if n, err := strconv.Atoi(u.Port()); err == nil {
			ports[n] = true
		}
	}
	sctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{b: b, ports: ports, cancel: cancel, done: make(chan struct{}), tabs: map[*Tab]struct{}{}, refs: 1,
		local: slices.Clone(p.AllowLocal), resolver: p.Resolver, refused: map[string]refusal{},
		popups: map[string]*popup{}, preGuards: map[string]*guardSession{}, workers: map[string][]*Tab{}}
	paused, err := b.c.Fetch.RequestPaused(sctx)
	if err != nil {
		cancel()
		return nil, b.fail(err)
	}
	fail := func(err error) (*Gateway, error) {
		g.mu.Lock()
		g.stopped = true
		g.mu.Unlock()
		paused.Close()
		cancel()
		g.stopTargets(ctx)
		g.wg.Wait()
		return nil, b.fail(err)
	}
	enable := fetch.NewEnableArgs().SetPatterns(g.patternsLocked())
	if err := b.c.Fetch.Enable(ctx, enable); err != nil {
		return fail(err)
	}
	if err := b.c.Browser.SetDownloadBehavior(ctx, browser.NewSetDownloadBehaviorArgs("deny")); err != nil {
		return fail(err)
	}
	if err := g.watchTargets(ctx, sctx); err != nil {
		return fail(err)
	}
	go g.serve(sctx, paused)
	return g, nil
}

func ptr[T any](v T) *T { return &v }

// pausedSchemes are the schemes other than http and https whose requests
// go through the browser's network stack, and so can be paused; data:,
// blob: and WebUI pages never become requests and are refused where a
// navigation starts or commits instead.
var pausedSchemes = []string{"file", "chrome-extension", "chrome-untrusted", "chrome", "devtools", "filesystem", "isolated-app", "ftp"}

// patternsLocked are the requests the browser pauses for the gateway:
// every request of a scheme the network stack serves besides http and
// https, every request that names a denied port, every document (a
// navigation of a page or a frame), whose address decides whether a
// guarded tab may load it (local.go), and every request whose address may
// be local by its text (localnet.go). Other http and https requests (the
// web's subresources) are never paused: a pause costs a round trip through
// the browser process for each request, which measured 20 ms and more per
// document on a loaded machine. g.mu is held, or g is not yet shared.
func (g *Gateway) patternsLocked() []fetch.RequestPattern {
	ps := []fetch.RequestPattern{{URLPattern: ptr("*"), ResourceType: ptr(network.ResourceTypeDocument)}}
	ps = append(ps, localRequestPatterns()...)
	for _, s := range pausedSchemes {
		ps = append(ps, fetch.RequestPattern{URLPattern: ptr(s + ":*")})
	}
	for n := range g.ports {
		switch n {
		case 80:
			ps = append(ps, fetch.RequestPattern{URLPattern: ptr("http://*")})
		case 443:
			ps = append(ps, fetch.RequestPattern{URLPattern: ptr("https://*")})
		default:
			ps = append(ps, fetch.RequestPattern{URLPattern: ptr("*://*:" + strconv.Itoa(n) + "/*")})
		}
	}
	return ps
}

// denyPort reads "127.0.0.1:PORT", "localhost:PORT", "[::1]:PORT" or
// "PORT".
func denyPort(s string) (int, error) {
	p := s
	if _, port, err := net.SplitHostPort(s); err == nil {
		p = port
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%w: deny entry %q is not a loopback host:port", ErrEndpoint, s)
	}
	return n, nil
}

// Close gives back one Guard. The last one stops enforcing the policy
// (the denials it added stay until then) and waits for the gateway's
// goroutines; requests paused meanwhile are let go by the browser when the
// interception ends. Closing more often than guarding does nothing.
func (g *Gateway) Close() error {
	g.b.gmu.Lock()
	g.mu.Lock()
	if g.refs == 0 {
		g.mu.Unlock()
		g.b.gmu.Unlock()
		return nil
	}
	g.refs--
	last := g.refs == 0
	g.mu.Unlock()
	if last && g.b.gateway == g {
		g.b.gateway = nil
	}
	g.b.gmu.Unlock()
	if !last {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
	defer cancel()
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	g.cancel()
	<-g.done
	g.stopTargets(cctx)
	g.wg.Wait()
	g.mu.Lock()
	pending := g.preGuards
	g.preGuards = map[string]*guardSession{}
	g.mu.Unlock()
	for _, gs := range pending {
		gs.release(g.b)
	}
	if g.b.Err() == nil {
		_ = g.b.c.Fetch.Disable(cctx)
	}
	return nil
}

func (g *Gateway) serve(ctx context.Context, paused fetch.RequestPausedClient) {
	defer close(g.done)
	defer paused.Close()
	for {
		ev, err := paused.Recv()
		if err != nil {
			return
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.decide(ctx, ev)
		}()
	}
}

// decide lets one paused request go or fails it.
func (g *Gateway) decide(ctx context.Context, ev *fetch.RequestPausedReply) {
	doc := ev.ResourceType == network.ResourceTypeDocument
	if doc {
		if p := g.pendingPopup(ctx, string(ev.FrameID)); p != nil {
			g.decidePopup(ctx, ev, p)
			return
		}
	}
	reason := g.refusal(ev.Request.URL)
	switch {
	case reason != "":
	case doc:
		reason = g.localRefusal(ctx, string(ev.FrameID), ev.Request.URL)
	default:
		reason = g.subresourceRefusal(ctx, string(ev.FrameID), ev.Request.URL)
	}
	if reason == "" {
		_ = g.b.c.Fetch.ContinueRequest(ctx, fetch.NewContinueRequestArgs(ev.RequestID))
		return
	}
	if doc {
		// What a navigation that fails reports; a page's other requests
		// are only logged.
		g.noteRefusal(string(ev.FrameID), ev.Request.URL, reason)
	}
	_ = g.b.c.Fetch.FailRequest(ctx, fetch.NewFailRequestArgs(ev.RequestID, network.ErrorReasonBlockedByClient))
	g.mu.Lock()
	var tabs []*Tab
	for t := range g.tabs {
		tabs = append(tabs, t)
	}
	g.mu.Unlock()
	for _, t := range tabs {
		t.requestRefused(string(ev.FrameID), ev.Request.URL, string(ev.ResourceType), reason)
	}
}

// refusal says why a request may not go, or "" when it may.
func (g *Gateway) refusal(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "malformed address"
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return u.Scheme + ": is not a web address"
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
	}
	n, _ := strconv.Atoi(port)
	g.mu.Lock()
	denied := g.ports[n]
	g.mu.Unlock()
	if denied && mayBeLoopback(u.Hostname(), n) {
		return "a host endpoint no page may reach"
	}
	return ""
}

// mayBeLoopback is true unless host is an IP literal off this machine: any
// name may resolve to loopback (localhost, *.localhost, a hosts-file
// alias), and the unspecified address reaches loopback too. On the web's
// own ports only localhost names count, or every site would be refused.
func mayBeLoopback(host string, port int) bool {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		if port == 80 || port == 443 {
			h := strings.TrimSuffix(strings.ToLower(host), ".")
			return h == "localhost" || strings.HasSuffix(h, ".localhost")
		}
		return true
	}
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified()
}

func (g *Gateway) watch(t *Tab) {
	g.mu.Lock()
	g.tabs[t] = struct{}{}
	g.mu.Unlock()
}

// unwatch forgets a tab whose session ended, and the popups the gateway
// attached for it.
func (g *Gateway) unwatch(t *Tab) {
	g.mu.Lock()
	delete(g.tabs, t)
	if p := g.popups[t.id]; p != nil && p.adopted() == t {
		delete(g.popups, t.id)
	}
	g.mu.Unlock()
	t.releaseGuard()
	t.releasePopups()
}

// documentAllowed reports whether a committed document's address is one a
// page action, a screenshot or a script's view may touch (see
// [sitepolicy.DocumentAllowed]).
func documentAllowed(raw string) bool { return sitepolicy.DocumentAllowed(raw) }

// CheckNavigation reports whether a navigation to raw may be started on a
// script's behalf: only http and https addresses and about:blank. Anything
// else (javascript:, data:, file:, chrome:, view-source:, devtools:,
// blob:, filesystem:, …) is a *NavigationBlockedError whose reason
// [sitepolicy.NavigationRefusal] gives.
func CheckNavigation(raw string) error {
	if why := sitepolicy.NavigationRefusal(raw); why != "" {
		return &NavigationBlockedError{URL: raw, Reason: why}
	}
	return nil
}
