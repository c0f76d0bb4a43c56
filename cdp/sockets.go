package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/cdp/sitepolicy"
	"github.com/tranquil/automation/internal/netclass"
)

// WebSockets of a guarded tab's pages and workers. The browser opens them
// without a request the Fetch domain could pause, and Network.setBlockedURLs
// does not hold them back either; what does is network conditions a
// target emulates for the addresses its rules match
// (Network.emulateNetworkConditionsByRule with offline set), which the
// browser applies while the Network domain is on for the target, and
// for a new page only if set before its first document is on its way. So
// a guarded tab keeps the Network domain on with the rules set, on its own
// session and each of its out-of-process frames'; popups are guarded tabs
// themselves, given the rules before they run (popupguard.go). The rules: first the hosts the tab was granted, let through; then every
// local name, held off; then every name ending in a letter (a web
// address), let through; then every IPv4 and IPv6 address, held off.
//
// The rules match addresses by the browser's URLPattern syntax, which
// cannot tell one address range from another: its wildcards and groups do
// not match in an IP address's text. So a guarded tab's pages open no
// WebSocket to an IP address the run was not granted, local or not, nor
// to a name ending in a digit with four labels; names resolving to a local
// address are not held back (see local.go). The rules for local names
// hold back the target's plain requests too, which the gateway refuses
// anyway, and so those to single-word names (http://router/), which no
// Fetch pattern can name.
//
// The cost: with the Network domain on, the browser reports every request
// and WebSocket message of a guarded tab's pages on the tab's own session
// (which drops all but its documents' responses).

// localState is a tab's share in keeping local addresses a grant.
//
// Goroutines: setup and the tab's frame and worker setup tasks (the
// rules), the receive goroutines of the tab's sessions (workers), the
// gateway's goroutines (the guard, popups) and the tab's gateway watch
// task (releaseGuard, releasePopups). Its lock is a leaf: nothing is
// called, and no other part's lock taken, while mu is held.
type localState struct {
	mu          sync.Mutex
	socketRules []byte              // the rules' parameters, once made
	guard       *guardSession       // a popup's guard session (popupguard.go)
	workers     map[string]*session // dedicated workers' sessions: workers.go
	popups      []*Tab              // popups the gateway attached for the tab: openers.go
}

// rules are the socket rules' parameters, made by build the first time.
// Two callers may both make them; the later one's are kept.
func (l *localState) rules(build func() []byte) []byte {
	l.mu.Lock()
	params := l.socketRules
	l.mu.Unlock()
	if params == nil {
		params = build()
		l.mu.Lock()
		l.socketRules = params
		l.mu.Unlock()
	}
	return params
}

// setGuard keeps a popup's guard session; takeGuard takes it back.
func (l *localState) setGuard(gs *guardSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.guard = gs
}

func (l *localState) takeGuard() *guardSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	gs := l.guard
	l.guard = nil
	return gs
}

// addWorker keeps a dedicated worker's session; dropWorker takes it out
// (nil when it is not a worker's).
func (l *localState) addWorker(ws *session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.workers == nil {
		l.workers = map[string]*session{}
	}
	l.workers[ws.id] = ws
}

func (l *localState) dropWorker(sessionID string) *session {
	l.mu.Lock()
	defer l.mu.Unlock()
	ws := l.workers[sessionID]
	delete(l.workers, sessionID)
	return ws
}

// addPopup keeps a popup attached for the tab; takePopups takes them all.
func (l *localState) addPopup(p *Tab) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.popups = append(l.popups, p)
}

func (l *localState) takePopups() []*Tab {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := l.popups
	l.popups = nil
	return ps
}

// netCondition is one rule of Network.emulateNetworkConditionsByRule.
type netCondition struct {
	URLPattern string  `json:"urlPattern"`
	Offline    bool    `json:"offline"`
	Latency    float64 `json:"latency"`
	Download   float64 `json:"downloadThroughput"`
	Upload     float64 `json:"uploadThroughput"`
}

// socketRulesParams are the rules' command parameters for a target that
// may reach grants (sites and host entries naming local hosts).
func socketRulesParams(grants []string) []byte {
	var rules []netCondition
	add := func(offline bool, patterns ...string) {
		for _, p := range patterns {
			rules = append(rules, netCondition{URLPattern: p, Offline: offline, Download: -1, Upload: -1})
		}
	}
	for _, s := range grants {
		add(false, grantPatterns(s)...)
	}
	// Plain requests to IPv6 addresses are the gateway's to judge, which
	// tells their ranges apart; the single-word rule below would match them.
	add(false, "http{s}?://[*]:*/*")
	for _, n := range []string{"localhost", "*.localhost", "*.local", "*.internal", "*.lan", "*.home.arpa", ":host"} {
		add(true, "*://"+n+":*/*", "*://"+n+".:*/*")
	}
	for c := 'a'; c <= 'z'; c++ {
		add(false, "ws{s}?://*"+string(c)+":*/*", "ws{s}?://*"+string(c)+".:*/*")
	}
	add(true, "ws{s}?://:a.:b.:c.:d:*/*", "ws{s}?://[*]:*/*")
	b, _ := json.Marshal(struct {
		Rules []netCondition `json:"matchedNetworkConditions"`
	}{rules})
	return b
}

// grantPatterns are the addresses a grant ("host" or "host:port") names, as
// rule patterns: an IPv4 address also as the browser writes it mapped into
// IPv6, a name also with a trailing dot, and the web's default ports also
// as URLs leave them, without a port.
func grantPatterns(site string) []string {
	h, port, ok := sitepolicy.LocalSite(site)
	if !ok {
		return nil
	}
	name, a, isAddr := netclass.Canonical(h)
	var hosts []string
	switch {
	case isAddr && a.Unmap().Is4():
		a = a.Unmap()
		hosts = []string{a.String(), patternIPv6(mappedIPv6(a))}
	case isAddr:
		hosts = []string{patternIPv6(a.String())}
	default:
		hosts = []string{name, name + "."}
	}
	var out []string
	for _, host := range hosts {
		if port == 0 {
			out = append(out, "*://"+host+":*/*")
			continue
		}
		p := strconv.Itoa(port)
		out = append(out, "*://"+host+":"+p+"/*")
		switch port {
		case 80:
			out = append(out, "ws://"+host+"/*", "http://"+host+"/*")
		case 443:
			out = append(out, "wss://"+host+"/*", "https://"+host+"/*")
		}
	}
	return out
}

// patternIPv6 writes an IPv6 address as a pattern's host: in brackets,
// each colon escaped (a bare one would start a named group).
func patternIPv6(a string) string { return "[" + strings.ReplaceAll(a, ":", `\:`) + "]" }

// mappedIPv6 writes IPv4 address a mapped into IPv6 as a browser does:
// ::ffff:7f00:1 for 127.0.0.1.
func mappedIPv6(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("::ffff:%x:%x", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]))
}

// socketRules are the rules' parameters for a guarded tab, made once.
func (t *Tab) socketRules(g *Gateway) []byte {
	return t.local.rules(func() []byte { return socketRulesParams(g.localGrants([]*Tab{t})) })
}

// netOn is Network.enable without body buffers: nothing reads them.
var netOn = []byte(`{"maxTotalBufferSize":0,"maxResourceBufferSize":0}`)

// guardSockets gives a guarded tab's page its rules, on the tab's own
// session, with the Network domain on for good (see above; response.go
// otherwise turns it off between gotos). A popup also keeps the guard
// session the gateway gave it before it ran (popupguard.go). The commands
// are not waited for: Network.enable is answered only once the page's
// renderer has seen it, which a page stuck in a loop never does, while
// the browser applies it at once.
func (t *Tab) guardSockets(context.Context) error {
	g := t.opts.Gateway
	if g == nil {
		return nil
	}
	if gs := g.takePreGuard(t.id); gs != nil {
		t.local.setGuard(gs)
	}
	n := &t.net
	n.mu.Lock()
	n.pinned = true
	on := n.on
	n.on = true
	n.mu.Unlock()
	if !on {
		if err := t.sendOnly("Network.enable", netOn); err != nil {
			return err
		}
	}
	return t.sendOnly("Network.emulateNetworkConditionsByRule", t.socketRules(g))
}

// guardSession turns the Network domain on for session rt and sets the
// tab's rules there.
func (t *Tab) guardSession(g *Gateway, rt *route) error {
	if err := t.b.m.sendOn(rt, "Network.enable", netOn); err != nil {
		return err
	}
	return t.b.m.sendOn(rt, "Network.emulateNetworkConditionsByRule", t.socketRules(g))
}

// guardFrameSockets gives an out-of-process frame of a guarded tab its
// rules, on the frame's session.
func (t *Tab) guardFrameSockets(cs *session) error {
	if g := t.opts.Gateway; g != nil {
		return t.guardSession(g, cs.route)
	}
	return nil
}

// releaseGuard ends the tab's guard session, once the tab's has ended.
func (t *Tab) releaseGuard() {
	t.local.takeGuard().release(t.b)
}

// Workers' WebSockets follow no target's rules: the browser emulates
// network conditions for the WebSockets of pages and frames only. So each
// worker of a guarded tab (dedicated, or a shared or service worker that
// serves one) has its WebSocket constructors replaced, while it is paused
// before its first statement, by ones that refuse what the rules hold
// back: a local name or an IP address the grants do not name. The
// replacements read the address once, as the browser then does, and leave
// no way back to the browser's own constructor in the worker's one realm.

// workerSocketJS is the replacement; it is called with the grants as
// [host, port] pairs, the host as URL.hostname writes it, port 0 for any.
const workerSocketJS = `(grants) => {
  const names = [".localhost", ".local", ".internal", ".lan", ".home.arpa"];
  const refused = (raw) => {
    let u;
    try { u = new URL(raw, self.location.href); } catch { return false; }
    const host = u.hostname.replace(/\.$/, "");
    const port = u.port ? Number(u.port) : (u.protocol === "wss:" || u.protocol === "https:" ? 443 : 80);
    if (grants.some(([h, p]) => h === host && (p === 0 || p === port))) return false;
    return host.startsWith("[") || /^[0-9.]+$/.test(host) || !host.includes(".") || names.some((n) => host.endsWith(n));
  };
  for (const name of ["WebSocket", "WebSocketStream"]) {
    const Native = self[name];
    if (typeof Native !== "function") continue;
    const Guarded = {
      [name]: function (url, ...rest) {
        if (!new.target) throw new TypeError("Failed to construct '" + name + "': Please use the 'new' operator.");
        const s = String(url);
        if (refused(s)) throw new DOMException("Failed to construct '" + name + "': " + s + " is a local address this script may not reach.", "SecurityError");
        return Reflect.construct(Native, [s, ...rest], new.target);
      },
    }[name];
    Guarded.prototype = Native.prototype;
    for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) {
      if (k in Native) Object.defineProperty(Guarded, k, { value: Native[k], enumerable: true });
    }
    Object.defineProperty(Native.prototype, "constructor", { value: Guarded, writable: false, configurable: false });
    Object.defineProperty(self, name, { value: Guarded, writable: false, configurable: false });
  }
}`

// workerGrants are grants as workerSocketJS reads them.
func workerGrants(grants []string) [][2]any {
	out := [][2]any{}
	for _, s := range grants {
		h, port, ok := sitepolicy.LocalSite(s)
		if !ok {
			continue
		}
		name, a, isAddr := netclass.Canonical(h)
		switch {
		case isAddr && a.Unmap().Is4():
			out = append(out, [2]any{a.Unmap().String(), port}, [2]any{"[" + mappedIPv6(a.Unmap()) + "]", port})
		case isAddr:
			out = append(out, [2]any{"[" + a.String() + "]", port})
		default:
			out = append(out, [2]any{name, port})
		}
	}
	return out
}

// guardWorker replaces the WebSocket constructors of the paused worker
// whose session c is, for grants.
func guardWorker(ctx context.Context, c *devtools.Client, grants []string) error {
	arg, err := json.Marshal(workerGrants(grants))
	if err != nil {
		return err
	}
	expr := "(" + workerSocketJS + ")(" + string(arg) + ")"
	r, err := c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(expr).SetSilent(true))
	if err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("cdp: guarding a worker's sockets: %s", r.ExceptionDetails.Text)
	}
	return nil
}

// guardWorkerSockets guards a dedicated worker of the tab, when the tab is
// guarded.
func (t *Tab) guardWorkerSockets(ctx context.Context, c *devtools.Client) error {
	g := t.opts.Gateway
	if g == nil {
		return nil
	}
	return guardWorker(ctx, c, g.localGrants([]*Tab{t}))
}
