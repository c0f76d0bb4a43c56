//go:build !js

package permissions

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tranquil/automation/display"
	"github.com/tranquil/automation/internal/netclass"
)

// Risk grades a grant for the consent prompt.
type Risk int

const (
	RiskLow Risk = iota + 1
	RiskMedium
	RiskHigh
)

func (r Risk) String() string {
	switch r {
	case RiskLow:
		return "low"
	case RiskMedium:
		return "medium"
	case RiskHigh:
		return "high"
	}
	return fmt.Sprintf("Risk(%d)", int(r))
}

// Description is the consent wording of one grant.
type Description struct {
	Grant Grant
	Text  string
	Risk  Risk
}

// Describe words every grant of the header for the consent prompt, one line
// per grant, in canonical order. The wording says what a grant really allows,
// not what the author meant it for: a net= name that this computer's hosts
// file points at a loopback or private address, or that is the computer's
// own name, is worded as reaching this computer or the local network (the
// hosts file is read; DNS is never asked). Text holds no control or
// invisible format characters (see display.Line).
func (h *Header) Describe() []Description {
	kinds := map[Grant]PathKind{}
	for _, p := range h.Read {
		kinds[Grant{"read", p.Resolved}] = p.Kind
	}
	for _, p := range h.Write {
		kinds[Grant{"write", p.Resolved}] = p.Kind
	}
	return describe(h.Grants(), kinds)
}

// Describe words grants known only by their canonical form, such as the
// grants a changed header removed. Paths are worded without knowing whether
// they are files or folders.
func (gs Grants) Describe() []Description { return describe(gs, nil) }

func describe(gs Grants, kinds map[Grant]PathKind) []Description {
	var sites []string
	for _, g := range gs {
		if g.Key == "sites" {
			sites = append(sites, g.Value)
		}
	}
	where := "on any site"
	if len(sites) > 0 {
		where = "on " + strings.Join(sites, ", ")
	}
	local := localSitesOf(sites)
	// With a browser grant, tab.waitForDownload saves what its pages
	// download under the write= grants: the user is told so there.
	downloads := slices.ContainsFunc(gs, func(g Grant) bool { return g.Key == "browser" || g.Key == "forms" || g.Key == "page-js" })
	out := make([]Description, 0, len(gs))
	for _, g := range gs {
		kind, known := kinds[g]
		if !known {
			kind = -1
		}
		text, risk := describeGrant(g, where, local, kind)
		if g.Key == "write" && downloads {
			text += "; can save files that pages download into " + g.Value
		}
		// Paths carry the names of the folders above the script, which
		// may hold anything, terminal escapes included.
		out = append(out, Description{Grant: g, Text: display.Line(text), Risk: risk})
	}
	return out
}

// describeGrant words one grant; where is the sites page actions are
// limited to, local the end of the browser grant's wording (localSitesOf).
func describeGrant(g Grant, where, local string, kind PathKind) (string, Risk) {
	v := g.Value
	switch g.Key {
	case "none":
		return "nothing beyond running in its sandbox", RiskLow
	case "browser":
		return "can see and control your browser tabs, including sites where you are signed in, " + local, RiskHigh
	case "clipboard":
		return "can read and replace what you copy, which may include passwords", RiskHigh
	case "forms":
		return "can fill in and submit forms in your browser tabs " + where, RiskHigh
	case "page-js":
		return "can run its own code inside your pages " + where + ", seeing what those pages see", RiskHigh
	case "sites":
		if class, note := siteReach(v); class == loopbackHost || class == privateHost {
			return "can open and read, in your browser tabs, pages of " + reachNoun(class) + ", and let the pages it drives send them requests: " + v + note, RiskHigh
		}
		return "limits its form filling and page code to " + v, RiskLow
	case "net":
		return describeHost(v, "can connect to "), riskOfHost(v)
	case "import":
		return describeHost(v, "can load and run code from "), max(riskOfHost(v), RiskMedium)
	case "run":
		return "can run commands as you, with your full access: " + v, RiskHigh
	case "read":
		return "can read " + pathScope(v, kind), RiskMedium
	case "write":
		text := "can create, change and delete " + pathScope(v, kind)
		if kind == Dir || isCodePath(v) {
			if isCodePath(v) {
				text += ", which is code that runs later"
			}
			return text, RiskHigh
		}
		return text, RiskMedium
	case "env":
		if p, ok := strings.CutSuffix(v, "*"); ok {
			return "can read environment variables whose names start with " + p, RiskMedium
		}
		return "can read the environment variable " + v, RiskLow
	case "timeout":
		if v == "none" {
			return "can keep running until you stop it", RiskLow
		}
		return "can run for up to " + v, RiskLow
	}
	return "grants " + g.String(), RiskHigh
}

// siteReach grades a sites= entry by what it lets a run's tabs load: a
// wildcard never reaches a local address (only a host named exactly
// does), anything else as a net= entry would. note, when not empty, says
// why in parentheses.
func siteReach(entry string) (hostClass, string) {
	if strings.HasPrefix(entry, "*.") {
		return wildcardHost, ""
	}
	class, note := reach(entry)
	if note != "" {
		note = " (" + note + ")"
	}
	return class, note
}

func reachNoun(class hostClass) string {
	if class == loopbackHost {
		return "services on this computer"
	}
	return "devices on your local network"
}

// localSitesOf ends the browser grant's wording: which local addresses the
// run's tabs may reach (open, and send requests to from their pages and
// popups), the ones sites= names, or that they reach none.
func localSitesOf(sites []string) string {
	byClass := map[hostClass][]string{}
	for _, s := range sites {
		if class, _ := siteReach(s); class == loopbackHost || class == privateHost {
			byClass[class] = append(byClass[class], s)
		}
	}
	var parts []string
	for _, class := range []hostClass{loopbackHost, privateHost} {
		if l := byClass[class]; len(l) > 0 {
			parts = append(parts, reachNoun(class)+" ("+strings.Join(l, ", ")+")")
		}
	}
	if len(parts) == 0 {
		return "but not reach services on this computer or devices on your local network from them"
	}
	return "and reach from them " + strings.Join(parts, " and ")
}

func pathScope(p string, kind PathKind) string {
	switch kind {
	case File:
		return p
	case Dir:
		return p + " and everything inside"
	}
	return p + " (and everything inside, if it is or becomes a folder)"
}

// isCodePath reports whether writing p could change code that runs later.
func isCodePath(p string) bool {
	base := strings.ToLower(filepath.Base(p))
	switch filepath.Ext(base) {
	case ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs":
		return true
	}
	return slices.Contains([]string{"deno.json", "deno.jsonc", "package.json", "deno.lock", "import_map.json"}, base)
}

type hostClass int

const (
	publicHost hostClass = iota
	wildcardHost
	loopbackHost
	privateHost
)

// splitHostPort splits a canonical net entry into host and port.
func splitHostPort(entry string) (host, port string) {
	if strings.HasPrefix(entry, "[") {
		end := strings.Index(entry, "]")
		return entry[:end+1], strings.TrimPrefix(entry[end+1:], ":")
	}
	host, port, _ = strings.Cut(entry, ":")
	return host, port
}

// entryAddr returns the IP address a canonical entry names, if it names one.
func entryAddr(entry string) (netip.Addr, bool) {
	host, _ := splitHostPort(entry)
	addr, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return addr, err == nil
}

// classify grades a net entry by its text alone.
func classify(entry string) hostClass {
	host, _ := splitHostPort(entry)
	name, wild := strings.CutPrefix(host, "*.")
	c, lookup := netclass.Host(name)
	switch {
	case c != netclass.Public:
		return classOf(c)
	case wild && lookup:
		return wildcardHost
	}
	return publicHost
}

func addrClass(addr netip.Addr) hostClass { return classOf(netclass.Addr(addr)) }

func classOf(c netclass.Class) hostClass {
	switch c {
	case netclass.Loopback:
		return loopbackHost
	case netclass.Private:
		return privateHost
	}
	return publicHost
}

// reach grades a net entry by what it really reaches: its text first,
// then, for a name, this computer's hosts file and own name, which can
// point any name at this computer or the local network. note says why,
// when the name alone does not.
func reach(entry string) (class hostClass, note string) {
	class = classify(entry)
	if _, isAddr := entryAddr(entry); isAddr || class == loopbackHost {
		return class, ""
	}
	if c, n, ok := localReach(entry); ok {
		return c, n
	}
	return class, ""
}

func describeHost(entry, verb string) string {
	class, note := reach(entry)
	if note != "" {
		note = " (" + note + ")"
	}
	switch class {
	case loopbackHost:
		return strings.Replace(verb, "connect to ", "reach ", 1) + "services on this computer: " + entry + note
	case privateHost:
		return strings.Replace(verb, "connect to ", "reach ", 1) + "devices on your local network: " + entry + note
	case wildcardHost:
		host, port := splitHostPort(entry)
		s := verb + strings.TrimPrefix(host, "*.") + " and all of its subdomains"
		if port != "" {
			s += " on port " + port
		}
		return s
	}
	return verb + entry
}

func riskOfHost(entry string) Risk {
	switch class, _ := reach(entry); class {
	case loopbackHost, privateHost:
		return RiskHigh
	}
	return RiskMedium
}
