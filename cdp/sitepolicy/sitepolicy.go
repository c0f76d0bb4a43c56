package sitepolicy

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/tranquil/automation/internal/netclass"
	"github.com/tranquil/automation/internal/sitematch"
)

// Allowed reports whether the page at rawURL is on one of sites. A site
// is a hostname ("example.com", matching only that host) or a wildcard
// ("*.example.com", matching any subdomain but not example.com itself),
// either with an optional port ("localhost:8080", "[::1]:3000") that the
// page's port, written or implied by its scheme, must then equal. Matching
// ignores case and a trailing dot, and ports when the site names none. Only
// http and https pages can match; a malformed URL or site never does.
func Allowed(rawURL string, sites []string) bool {
	return sitematch.Match(rawURL, sites, true)
}

// Granted is Allowed without wildcards: a local address is granted only by
// a site naming its host exactly.
func Granted(rawURL string, sites []string) bool {
	return sitematch.Match(rawURL, sites, false)
}

// DocumentAllowed reports whether a committed document's address is one a
// page action, a screenshot or a script's view may touch: http, https, or
// a blank page.
func DocumentAllowed(raw string) bool {
	if raw == "about:blank" || raw == "" {
		return true
	}
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "about" && u.Opaque == "blank")
}

// NavigationRefusal says why a navigation to raw may not be started on a
// script's behalf, or "" when it may: only http and https addresses with a
// host, and about:blank. Anything else (javascript:, data:, file:,
// chrome:, view-source:, devtools:, blob:, filesystem:, …) is refused.
func NavigationRefusal(raw string) string {
	if raw == "about:blank" {
		return ""
	}
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return ""
	}
	scheme := "that"
	if err == nil && u.Scheme != "" {
		scheme = u.Scheme + ":"
	}
	return scheme + " is not an http or https address"
}

// LocalSite reads a site as a grant of a local address: its host and port
// (0 for any); false when it cannot be one (not a host or host:port, or a
// wildcard, which never grants a local address).
func LocalSite(site string) (host string, port int, ok bool) {
	h, port, ok := sitematch.Split(site)
	if !ok || strings.HasPrefix(h, "*.") || !sitematch.ValidHost(h) {
		return "", 0, false
	}
	return h, port, true
}

// BadLocalSite returns the first entry of sites that cannot grant a local
// address (see LocalSite); false when every entry can.
func BadLocalSite(sites []string) (string, bool) {
	for _, s := range sites {
		if _, _, ok := LocalSite(s); !ok {
			return s, true
		}
	}
	return "", false
}

// LocalGrant says which grant ("add sites=HOST to reach …") is missing to
// load or read the page at rawURL, judged by its address's text alone,
// with sites and allowLocal granted; "" when rawURL is no http or https
// address on this computer or the local network, or a grant names its
// host exactly.
func LocalGrant(rawURL string, sites, allowLocal []string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	class, _ := netclass.Host(u.Hostname())
	if class == netclass.Public {
		return ""
	}
	if Granted(rawURL, allowLocal) || Granted(rawURL, sites) {
		return ""
	}
	return GrantFor(u, class == netclass.Private)
}

// GrantFor names the grant that would let a tab load u, an address on
// this computer or, when onNetwork, on the local network.
func GrantFor(u *url.URL, onNetwork bool) string {
	site, a, isAddr := netclass.Canonical(u.Hostname())
	if isAddr {
		// The form sites= keeps (an IPv4 address mapped into IPv6 is
		// written as the IPv4 address), which grants this one too.
		site = a.Unmap().String()
	}
	if strings.Contains(site, ":") {
		site = "[" + site + "]"
	}
	if u.Port() != "" {
		site += ":" + strconv.Itoa(sitematch.PortOf(u))
	}
	what := "a service on this computer"
	if onNetwork {
		what = "a device on your local network"
	}
	return "add sites=" + site + " to reach " + what
}
