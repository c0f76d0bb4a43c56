package sitepolicy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/netclass"
	"github.com/tranquil/automation/internal/sitematch"
)

func TestAllowed(t *testing.T) {
	for _, c := range []struct {
		url   string
		sites []string
		want  bool
	}{
		{"https://example.com/a", []string{"example.com"}, true},
		{"https://EXAMPLE.com./a", []string{"example.com"}, true},
		{"https://example.com:8443/a", []string{"example.com"}, true},
		{"https://www.example.com/", []string{"example.com"}, false},
		{"https://www.example.com/", []string{"*.example.com"}, true},
		{"https://a.b.example.com/", []string{"*.example.com"}, true},
		{"https://example.com/", []string{"*.example.com"}, false},
		{"https://badexample.com/", []string{"*.example.com"}, false},
		{"https://example.com.evil.net/", []string{"example.com"}, false},
		{"https://evil.net/?u=https://example.com", []string{"example.com"}, false},
		{"https://example.com@evil.net/", []string{"example.com"}, false},
		{"file:///etc/passwd", []string{"example.com"}, false},
		{"about:blank", []string{"*.example.com"}, false},
		{"https://example.com/", []string{"*"}, false},
		{"https://example.com/", []string{"*.com.", ""}, true},
		{"https://example.com/", nil, false},
		{"http://[::1]:8080/", []string{"::1"}, true},
		{"%zz", []string{"example.com"}, false},
		// Ports.
		{"http://localhost:8080/a", []string{"localhost:8080"}, true},
		{"http://localhost:8081/a", []string{"localhost:8080"}, false},
		{"http://localhost/a", []string{"localhost:80"}, true},
		{"https://localhost/a", []string{"localhost:80"}, false},
		{"https://localhost/a", []string{"localhost:443"}, true},
		{"http://localhost:0080/", []string{"localhost:80"}, true},
		{"http://localhost:8080/", []string{"localhost"}, true},
		{"http://[::1]:3000/", []string{"[::1]:3000"}, true},
		{"http://[::1]:3000/", []string{"[::1]"}, true},
		{"http://[::1]:3000/", []string{"::1"}, true},
		{"http://[::1]:3001/", []string{"[::1]:3000"}, false},
		{"http://app.example.com:8443/", []string{"*.example.com:8443"}, true},
		{"http://app.example.com:8444/", []string{"*.example.com:8443"}, false},
		{"http://localhost:8080/", []string{"localhost:"}, false},
		{"http://localhost:8080/", []string{"localhost:0"}, false},
		{"http://localhost:8080/", []string{"localhost:x"}, false},
		{"http://localhost:8080/", []string{"[::1"}, false},
		{"http://localhost:99999/", []string{"localhost:99999"}, false},
	} {
		assert.Equal(t, c.want, Allowed(c.url, c.sites), "%s on %v", c.url, c.sites)
	}
	// A wildcard is a site for page actions, never a grant of a local host.
	assert.True(t, Allowed("http://app.localhost:8080/", []string{"*.localhost"}))
	assert.False(t, Granted("http://app.localhost:8080/", []string{"*.localhost"}))
	assert.True(t, Granted("http://app.localhost:8080/", []string{"app.localhost"}))
}

func FuzzAllowed(f *testing.F) {
	f.Add("https://www.example.com/x", "*.example.com")
	f.Add("https://example.com@evil.net/", "example.com")
	f.Add("http://[::1]:9/", "::1")
	f.Fuzz(func(t *testing.T, rawURL, site string) {
		if !Allowed(rawURL, []string{site}) {
			return
		}
		// Whatever matched must be an http(s) page whose host is the
		// site's (the same name, or the same address as the browser
		// reads IP literals: 0 and 000 are both 0.0.0.0) or ends with
		// ".<rest>" of a wildcard, on the site's port when it names one.
		u, err := url.Parse(rawURL)
		if err != nil {
			t.Fatalf("%q matched %q but does not parse: %v", rawURL, site, err)
		}
		host := sitematch.NormHost(u.Hostname())
		s, port, ok := sitematch.Split(site)
		if !ok || port != 0 && port != sitematch.PortOf(u) {
			t.Fatalf("%q matched %q on another port", rawURL, site)
		}
		hostName, hostAddr, hostIsAddr := netclass.Canonical(host)
		siteName, siteAddr, siteIsAddr := netclass.Canonical(s)
		same := host == s || hostIsAddr && siteIsAddr && hostAddr.Unmap() == siteAddr.Unmap() ||
			!hostIsAddr && !siteIsAddr && hostName == siteName
		rest, wild := strings.CutPrefix(s, "*.")
		if !(same || wild && strings.HasSuffix(host, "."+rest)) {
			t.Fatalf("%q matched %q", rawURL, site)
		}
		// A local grant is an exact match: never a wildcard's.
		if Granted(rawURL, []string{site}) && (wild || !same) {
			t.Fatalf("%q is an exact grant of %q", site, rawURL)
		}
	})
}

func TestDocumentAllowed(t *testing.T) {
	for raw, want := range map[string]bool{
		"": true, "about:blank": true, "http://x/": true, "HTTPS://x/a": true,
		"about:srcdoc": false, "data:text/html,x": false, "chrome-error://chromewebdata/": false, "%zz": false,
	} {
		assert.Equal(t, want, DocumentAllowed(raw), raw)
	}
}

func TestNavigationRefusal(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1/", "https://example.com/a?b#c", "about:blank", "HTTP://EXAMPLE.COM/"} {
		assert.Empty(t, NavigationRefusal(u), u)
	}
	for _, u := range []string{
		"javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "data:text/html,x", "file:///etc/passwd",
		"chrome://version", "view-source:http://x/", "devtools://devtools/x", "chrome-extension://a/b",
		"blob:http://x/1", "filesystem:http://x/temporary/a", "about:version", "about:srcdoc", "ws://x/",
		"http:///nohost", "http:/x", "//example.com/", "example.com", "", "\x00http://x/",
	} {
		assert.NotEmpty(t, NavigationRefusal(u), "%q", u)
	}
	assert.Equal(t, "data: is not an http or https address", NavigationRefusal("data:text/html,x"))
	assert.Equal(t, "that is not an http or https address", NavigationRefusal("\x00http://x/"))
}

func TestGrantNamesTheSite(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/x?y":  "add sites=127.0.0.1:8080 to reach a service on this computer",
		"http://LOCALHOST/":          "add sites=localhost to reach a service on this computer",
		"http://[::1]:3000/":         "add sites=[::1]:3000 to reach a service on this computer",
		"http://[::ffff:127.0.0.1]/": "add sites=127.0.0.1 to reach a service on this computer",
		"http://192.168.1.1/":        "add sites=192.168.1.1 to reach a device on your local network",
		"https://printer.local:631/": "add sites=printer.local:631 to reach a device on your local network",
		"https://example.com/":       "",
		"data:text/html,x":           "",
	} {
		assert.Equal(t, want, LocalGrant(raw, nil, nil), raw)
	}
	// A grant names the host exactly, from either list; a wildcard does not.
	assert.Empty(t, LocalGrant("http://127.0.0.1:8080/", []string{"127.0.0.1:8080"}, nil))
	assert.Empty(t, LocalGrant("http://127.0.0.1:8080/", nil, []string{"127.0.0.1"}))
	assert.NotEmpty(t, LocalGrant("http://127.0.0.1:8080/", []string{"127.0.0.1:9090"}, nil))
	assert.NotEmpty(t, LocalGrant("http://app.localhost/", []string{"*.localhost"}, nil))
}

func TestLocalSites(t *testing.T) {
	_, bad := BadLocalSite([]string{"127.0.0.1", "localhost:8080", "[::1]:3000", "dev.internal"})
	require.False(t, bad)
	for _, s := range []string{"*.localhost", "localhost:0", "", "http://127.0.0.1/", "a b"} {
		got, bad := BadLocalSite([]string{"localhost", s})
		assert.True(t, bad, s)
		assert.Equal(t, s, got)
	}
	h, port, ok := LocalSite("[::1]:3000")
	require.True(t, ok)
	assert.Equal(t, "::1", h)
	assert.Equal(t, 3000, port)
}
