package netclass

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAddr(t *testing.T) {
	for s, want := range map[string]Class{
		"127.0.0.1": Loopback, "127.255.255.254": Loopback, "0.0.0.0": Loopback, "::1": Loopback, "::": Loopback,
		"::ffff:127.0.0.1": Loopback, "10.1.2.3": Private, "172.16.0.1": Private, "172.31.255.255": Private,
		"192.168.1.1": Private, "100.64.0.1": Private, "100.127.255.255": Private, "169.254.169.254": Private,
		"fe80::1": Private, "fe80::1%eth0": Private, "fd12::1": Private, "fc00::1": Private, "::ffff:10.0.0.1": Private,
		"172.32.0.1": Public, "100.128.0.1": Public, "8.8.8.8": Public, "2001:db8::1": Public, "11.0.0.1": Public,
		"192.169.0.1": Public,
	} {
		assert.Equal(t, want, Addr(netip.MustParseAddr(s)), s)
	}
}

func TestHost(t *testing.T) {
	type want struct {
		c      Class
		lookup bool
	}
	for h, w := range map[string]want{
		"127.0.0.1": {Loopback, false}, "[::1]": {Loopback, false}, "::1": {Loopback, false}, "LOCALHOST.": {Loopback, false},
		"app.localhost": {Loopback, false}, "printer.local": {Private, false}, "router": {Private, false},
		"nas.home.arpa": {Private, false}, "db.internal": {Private, false}, "box.lan": {Private, false},
		"192.168.0.10": {Private, false}, "[fe80::1]": {Private, false}, "example.com": {Public, true},
		"localhost.example.com": {Public, true}, "93.184.216.34": {Public, false}, "": {Public, false},
		"localtest.me": {Public, true},
	} {
		c, lookup := Host(h)
		assert.Equal(t, w, want{c, lookup}, h)
	}
}

// TestCanonicalReadsHostsAsBrowsersDo: every spelling a browser reads as
// an address is that address (what Chromium's URL parser makes of each,
// checked by hand against Chromium 156's location.hostname).
func TestCanonicalReadsHostsAsBrowsersDo(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "127.1": "127.0.0.1", "2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1",
		"0x7F.1": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "127.0.0.1.": "127.0.0.1", "0": "0.0.0.0", "0x": "0.0.0.0",
		"[::ffff:127.0.0.1]": "::ffff:127.0.0.1", "[::FFFF:7f00:1]": "::ffff:127.0.0.1", "[::1]": "::1",
		"１２７．０．０．１": "127.0.0.1", "127。0。0。1": "127.0.0.1", "10.1": "10.0.0.1", "192.168.257": "192.168.1.1",
		"0300.0250.0.1": "192.168.0.1", "LOCALHOST.": "localhost", "ｌｏｃａｌｈｏｓｔ": "localhost", "Example.COM": "example.com",
		"1.2.3.example": "1.2.3.example",
	} {
		got, _, _ := Canonical(in)
		assert.Equal(t, want, got, in)
	}
	// Not addresses: too many parts, a part out of range, a bad digit.
	for _, in := range []string{"1.2.3.4.5", "256.1.1.1", "1.2.3.256", "4294967296", "09.0.0.1", "0x1g", "1..2", "[127.0.0.1]"} {
		_, _, isAddr := Canonical(in)
		assert.False(t, isAddr, in)
	}
}

func TestHostGradesEverySpellingOfThisComputer(t *testing.T) {
	for _, h := range []string{"127.1", "2130706433", "0x7f000001", "[::ffff:127.0.0.1]", "0.0.0.0", "0", "017700000001", "localhost.", "a.b.localhost", "１２７．０．０．１"} {
		c, lookup := Host(h)
		assert.Equal(t, Loopback, c, h)
		assert.False(t, lookup, h)
	}
	for _, h := range []string{"10.1", "0xa000001", "167772161", "[::ffff:10.0.0.1]", "0xc0.0xa8.1.1"} {
		c, _ := Host(h)
		assert.Equal(t, Private, c, h)
	}
}
