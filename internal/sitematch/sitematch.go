package sitematch

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/tranquil/automation/internal/netclass"
)

// Allowed reports whether the page at rawURL is on one of sites. A site
// is a hostname ("example.com", matching only that host) or a wildcard
// ("*.example.com", matching any subdomain but not example.com itself),
// either with an optional port ("localhost:8080", "[::1]:3000") that the
// page's port, written or implied by its scheme, must then equal. Matching
// ignores case and a trailing dot, and ports when the site names none. Only
// http and https pages can match; a malformed URL or site never does.
func Allowed(rawURL string, sites []string) bool {
	return Match(rawURL, sites, true)
}

// Match is Allowed; without wildcards, only sites that name the page's
// host exactly count.
func Match(rawURL string, sites []string, wildcards bool) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host, addr, isAddr := netclass.Canonical(u.Hostname())
	if host == "" {
		return false
	}
	port := PortOf(u)
	for _, s := range sites {
		h, p, ok := Split(s)
		if !ok || p != 0 && p != port {
			continue
		}
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			if wildcards && !isAddr && ValidHost(rest) && strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if ValidHost(h) && sameHost(host, addr, isAddr, h) {
			return true
		}
	}
	return false
}

// PortOf is the port an http or https URL goes to: the one it writes, or
// its scheme's; -1 for one no server can have.
func PortOf(u *url.URL) int {
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return 443
		}
		return 80
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return -1
	}
	return n
}

// Split reads a site as host, or host and port: "example.com",
// "example.com:8080", "[::1]:8080", "[::1]". A bare IPv6 address (more than
// one colon, no brackets) is all host. port is 0 when the site names none;
// ok is false for a port that is not a number from 1 to 65535, or an
// unclosed bracket.
func Split(site string) (host string, port int, ok bool) {
	s := NormHost(site)
	rest := ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", 0, false
		}
		s, rest = s[1:end], s[end+1:]
		if rest != "" && !strings.HasPrefix(rest, ":") {
			return "", 0, false
		}
	case strings.Count(s, ":") == 1:
		i := strings.Index(s, ":")
		s, rest = s[:i], s[i:]
	}
	if rest != "" {
		digits := rest[1:]
		n, err := strconv.Atoi(digits)
		if digits == "" || strings.Trim(digits, "0123456789") != "" || err != nil || n < 1 || n > 65535 {
			return "", 0, false
		}
		port = n
	}
	return strings.TrimSuffix(s, "."), port, true
}

// sameHost reports whether a site's host h names the host of a page
// (host, and addr when isAddr), both read as the browser reads hosts: an
// address in any spelling is that address, and an IPv4 address mapped into
// IPv6 is the IPv4 address, which it reaches. A name is never an address.
func sameHost(host string, addr netip.Addr, isAddr bool, h string) bool {
	name, a, hIsAddr := netclass.Canonical(h)
	if isAddr || hIsAddr {
		return isAddr && hIsAddr && addr.Unmap() == a.Unmap()
	}
	return name == host
}

// NormHost is a host as sites are compared: lower case, no surrounding
// spaces, no trailing dot.
func NormHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// ValidHost reports a site's host (after Split) that can match: no empty
// label, none of the characters no host name holds.
func ValidHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "*/@ ") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return false
		}
	}
	return true
}

// HostOf is the host name of rawURL, "" when it does not parse.
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
