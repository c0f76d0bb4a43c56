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
