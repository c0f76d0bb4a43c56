package netclass

import (
	"net/netip"
	"strings"
)

// Class is where an address is.
type Class int

// Classes.
const (
	// Public is any address that is neither of the others.
	Public Class = iota
	// Loopback is this computer.
	Loopback
	// Private is the local network: private, shared and link-local ranges.
	Private
)

func (c Class) String() string {
	switch c {
	case Loopback:
		return "loopback"
	case Private:
		return "private"
	}
	return "public"
}

var (
	loopbackPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("::/128")}
	privatePrefixes = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("fe80::/10")}
)

// Addr grades an address; an IPv4 address mapped into IPv6 is graded as
// the IPv4 address, and a zone is ignored.
func Addr(a netip.Addr) Class {
	a = a.WithZone("").Unmap()
	for _, p := range loopbackPrefixes {
		if p.Contains(a) {
			return Loopback
		}
	}
	for _, p := range privatePrefixes {
		if p.Contains(a) {
			return Private
		}
	}
	return Public
}

// privateSuffixes are the name suffixes only a local network answers:
// multicast DNS (.local), and the names set aside for private use.
var privateSuffixes = []string{".local", ".internal", ".lan", ".home.arpa"}

// Host grades host (a URL's hostname, brackets around an IPv6 address
// allowed, any case, a trailing dot allowed) by its text. lookup is true
// for a name whose class only DNS can tell; c is then Public. An empty
// host is Public without lookup.
func Host(host string) (c Class, lookup bool) {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return Public, false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return Addr(a), false
	}
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return Loopback, false
	case !strings.Contains(h, "."):
		return Private, false
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(h, s) {
			return Private, false
		}
	}
	return Public, true
}
