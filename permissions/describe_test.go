package permissions

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// useHosts points Describe at a hosts file of the test's own and fixes
// this computer's name, for the rest of the test.
func useHosts(t *testing.T, content, own string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	oldFile, oldName := hostsFile, hostName
	hostsFile, hostName = p, func() (string, error) { return own, nil }
	t.Cleanup(func() { hostsFile, hostName = oldFile, oldName })
}

// A name the hosts file (or the computer's own name) points at this
// computer reaches its services, whatever the name looks like; nothing is
// asked of DNS.
func TestDescribeNamesTheHostsFileResolves(t *testing.T) {
	useHosts(t, `# a typical Debian file, with a developer's overrides
127.0.0.1	localhost localhost.localdomain
127.0.1.1	devbox.example.org devbox
::1		ip6-localhost ip6-loopback
10.0.0.5	nas.home nas # the file server
192.168.1.20	printer
127.0.0.1	api.staging.example.com
fe80::1%eth0	router6
not-an-address	ignored
`, "Workstation.corp.example")
	script := scriptDir(t)
	for _, c := range []struct {
		net, text string
		risk      Risk
	}{
		{"localhost.localdomain", "can reach services on this computer: localhost.localdomain (the hosts file points localhost.localdomain to 127.0.0.1)", RiskHigh},
		{"devbox:8080", "can reach services on this computer: devbox:8080 (the hosts file points devbox to 127.0.1.1)", RiskHigh},
		{"ip6-localhost", "can reach services on this computer: ip6-localhost (the hosts file points ip6-localhost to ::1)", RiskHigh},
		{"api.staging.example.com", "can reach services on this computer: api.staging.example.com (the hosts file points api.staging.example.com to 127.0.0.1)", RiskHigh},
		{"*.staging.example.com", "can reach services on this computer: *.staging.example.com (the hosts file points api.staging.example.com to 127.0.0.1)", RiskHigh},
		{"workstation", "can reach services on this computer: workstation (this computer's own name)", RiskHigh},
		{"workstation.corp.example:22", "can reach services on this computer: workstation.corp.example:22 (this computer's own name)", RiskHigh},
		{"nas.home", "can reach devices on your local network: nas.home (the hosts file points nas.home to 10.0.0.5)", RiskHigh},
		{"printer", "can reach devices on your local network: printer (the hosts file points printer to 192.168.1.20)", RiskHigh},
		{"router6", "can reach devices on your local network: router6 (the hosts file points router6 to fe80::1)", RiskHigh},
		{"intranet", "can reach devices on your local network: intranet", RiskHigh},
		{"localhost:3000", "can reach services on this computer: localhost:3000", RiskHigh},
		{"api.github.com", "can connect to api.github.com", RiskMedium},
		{"example.com", "can connect to example.com", RiskMedium},
	} {
		h := mustParse(t, script, "// @permissions net="+c.net+"\n")
		ds := h.Describe()
		require.Len(t, ds, 1, c.net)
		assert.Equal(t, c.text, ds[0].Text, c.net)
		assert.Equal(t, c.risk, ds[0].Risk, c.net)
	}
	// import= is worded the same way.
	h := mustParse(t, script, "// @permissions import=devbox:8000\n")
	assert.Equal(t, "can load and run code from services on this computer: devbox:8000 (the hosts file points devbox to 127.0.1.1)", h.Describe()[0].Text)
}

// Without a readable hosts file the wording falls back on the name alone.
func TestDescribeWithoutHostsFile(t *testing.T) {
	useHosts(t, "", "")
	hostsFile = filepath.Join(t.TempDir(), "missing")
	h := mustParse(t, scriptDir(t), "// @permissions net=devbox,api.github.com\n")
	ds := h.Describe()
	require.Len(t, ds, 2)
	assert.Equal(t, "can connect to api.github.com", ds[0].Text)
	assert.Equal(t, "can reach devices on your local network: devbox", ds[1].Text)
}

// A folder above the script may be named anything; its name reaches the
// consent prompt only escaped.
func TestDescribeEscapesControlCharactersInPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows file names cannot hold control characters, so no folder can be named so")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(root, "evil\x1b[2J\x1b[1;1HApproved\u202e")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write(t, filepath.Join(dir, "in.txt"))
	h := mustParse(t, filepath.Join(dir, "s.ts"), "// @permissions read=in.txt\n")
	text := h.Describe()[0].Text
	assert.Equal(t, "can read "+root+`/evil\x1b[2J\x1b[1;1HApproved\u202e/in.txt`, text)
	assert.False(t, strings.ContainsAny(text, "\x1b\u202e"))
	gs := h.Grants()
	assert.False(t, strings.ContainsAny(gs.Describe()[0].Text, "\x1b\u202e"), "grants known only canonically are escaped too")
}
