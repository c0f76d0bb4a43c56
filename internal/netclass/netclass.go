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
// allowed, any case, a trailing dot allowed) by its text, read as a
// browser reads it ([Canonical]): 127.1, 2130706433 and 0x7f000001 are
// 127.0.0.1. lookup is true for a name whose class only DNS can tell; c is
// then Public. An empty host is Public without lookup.
func Host(host string) (c Class, lookup bool) {
	h, a, isAddr := Canonical(host)
	if isAddr {
		return Addr(a), false
	}
	if h == "" {
		return Public, false
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

// Canonical reads host as a browser's URL parser does (the WHATWG URL
// standard's host parsing): lower case; full-width letters, digits and
// dots as their ASCII forms; brackets around an IPv6 address dropped; a
// trailing dot dropped; and a host whose last label is a number read as an
// IPv4 address in any of the forms browsers accept (127.1, 2130706433,
// 0x7f000001, 0177.0.0.1). For an address, isAddr is set and a is it (an
// IPv4 address mapped into IPv6 stays mapped); name is then its text
// (an IPv6 address without brackets). A name is returned without other
// changes: the browser's own IDNA processing (punycode) is not redone
// here, which is why the gateway judges the addresses the browser reports.
func Canonical(host string) (name string, a netip.Addr, isAddr bool) {
	h := strings.ToLower(foldWidth(host))
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		if a, err := netip.ParseAddr(h[1 : len(h)-1]); err == nil && a.Is6() {
			return a.WithZone("").String(), a.WithZone(""), true
		}
		return h, netip.Addr{}, false
	}
	h = strings.TrimSuffix(h, ".")
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.WithZone("")
		return a.String(), a, true
	}
	if a, ok := parseIPv4(h); ok {
		return a.String(), a, true
	}
	return h, netip.Addr{}, false
}

// foldWidth maps the full-width forms of ASCII characters and the dots
// that IDNA maps to "." onto ASCII, as a browser does before anything
// else; other text is left alone.
func foldWidth(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u3002' || r == '\uff0e' || r == '\uff61':
			return '.'
		case r >= '\uff01' && r <= '\uff5e':
			return r - 0xfee0
		}
		return r
	}, s)
}

// parseIPv4 reads h as the WHATWG URL standard's IPv4 parser does, when its
// last label is a number: one to four parts, each decimal, octal (a
// leading 0) or hexadecimal (0x); the last part fills the bytes the others
// leave. A host whose last label is a number but that is no valid address
// is one no browser loads, and is reported as not an address.
func parseIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 || !isNumberLabel(parts[len(parts)-1]) {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// isNumberLabel reports whether a label makes a host an IPv4 address to a
// browser: all digits, or 0x followed by hexadecimal digits.
func isNumberLabel(l string) bool {
	if l == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// ipv4Number reads one part of an IPv4 address: 0x… hexadecimal, 0…
// octal, else decimal; values past 32 bits are refused.
func ipv4Number(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" {
		return 0, false
	}
	var n uint64
	for _, c := range p {
		d := strings.IndexRune("0123456789abcdef", c)
		if d < 0 || d >= base {
			return 0, false
		}
		if n = n*uint64(base) + uint64(d); n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}
