package permissions

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalIsStable(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	a := mustParse(t, script, "// @permissions write=out.md net=b.com,a.com:443 browser env=HOME net=a.com:443\n// @timeout 90m\n")
	b := mustParse(t, script, "// title\n//@permissions   browser  net=a.com:443   env=HOME write=./out.md net=b.com\n// @timeout 1h30m\n")
	want := "browser net=a.com:443 net=b.com write=" + quoteValue(filepath.Join(dir, "out.md")) + " env=HOME timeout=1h30m"
	assert.Equal(t, want, a.Canonical())
	assert.Equal(t, want, b.Canonical())

	gs, err := ParseCanonical(a.Canonical())
	require.NoError(t, err)
	assert.Equal(t, a.Grants(), gs)
	assert.Equal(t, a.Canonical(), gs.String())
}

func TestCanonicalQuotes(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	// esc is dir as a quoted value holds it: backslashes (Windows'
	// separators) doubled.
	esc := strings.ReplaceAll(dir, `\`, `\\`)
	sep := strings.ReplaceAll(string(filepath.Separator), `\`, `\\`)
	if runtime.GOOS == "windows" {
		// A quote cannot be part of a Windows file name: refused, not
		// mangled.
		_, err := Parse([]byte(`// @permissions read="we\"ird.txt"`+"\n"), script)
		require.ErrorIs(t, err, ErrBadValue)
		h := mustParse(t, script, `// @permissions read="my notes.txt"`+"\n")
		c := h.Canonical()
		assert.Equal(t, `read="`+esc+sep+`my notes.txt"`, c)
		gs, err := ParseCanonical(c)
		require.NoError(t, err)
		assert.Equal(t, h.Grants(), gs)
		return
	}
	h := mustParse(t, script, `// @permissions read="my notes.txt","we\"ird.txt"`+"\n")
	c := h.Canonical()
	assert.Equal(t, `read="`+esc+sep+`my notes.txt" read="`+esc+sep+`we\"ird.txt"`, c)
	gs, err := ParseCanonical(c)
	require.NoError(t, err)
	assert.Equal(t, h.Grants(), gs)
}

func TestParseCanonicalErrors(t *testing.T) {
	for _, s := range []string{"teleport", "browser=1", "net", `read="open`, "net=a\u202eb"} {
		_, err := ParseCanonical(s)
		assert.Error(t, err, s)
	}
	gs, err := ParseCanonical("")
	require.NoError(t, err)
	assert.Empty(t, gs)
}

func TestDiff(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	old := mustParse(t, script, "// @permissions browser net=a.com write=out.md\n")
	next := mustParse(t, script, "// @permissions browser net=a.com,b.com run=git\n// @timeout none\n")
	d := Diff(old.Grants(), next.Grants())
	assert.Equal(t, Grants{{"net", "b.com"}, {"run", "git"}, {"timeout", "none"}}, d.Added)
	assert.Equal(t, Grants{{"write", filepath.Join(dir, "out.md")}}, d.Removed)
	assert.False(t, d.Empty())
	assert.True(t, Diff(next.Grants(), next.Grants()).Empty())

	stored, err := ParseCanonical(old.Canonical())
	require.NoError(t, err)
	assert.Equal(t, d, Diff(stored, next.Grants()), "a stored canonical form diffs like the header it came from")
}

func TestDescribe(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	mkdir(t, filepath.Join(dir, "results"))
	write(t, filepath.Join(dir, "in.txt"))

	cases := []struct {
		header string
		text   string
		risk   Risk
	}{
		{"none", "nothing beyond running in its sandbox", RiskLow},
		{"browser", "can see and control your browser tabs, including sites where you are signed in, but not reach services on this computer or devices on your local network from them", RiskHigh},
		{"clipboard", "can read and replace what you copy, which may include passwords", RiskHigh},
		{"forms", "can fill in and submit forms in your browser tabs on any site", RiskHigh},
		{"page-js", "can run its own code inside your pages on any site, seeing what those pages see", RiskHigh},
		{"run=git", "can run commands as you, with your full access: git", RiskHigh},
		{"write=results", "can create, change and delete " + filepath.Join(dir, "results") + " and everything inside", RiskHigh},
		{"write=out.md", "can create, change and delete " + filepath.Join(dir, "out.md") + " (and everything inside, if it is or becomes a folder)", RiskMedium},
		{"write=other.ts", "can create, change and delete " + filepath.Join(dir, "other.ts") + " (and everything inside, if it is or becomes a folder), which is code that runs later", RiskHigh},
		{"read=in.txt", "can read " + filepath.Join(dir, "in.txt"), RiskMedium},
		{"read=results", "can read " + filepath.Join(dir, "results") + " and everything inside", RiskMedium},
		{"net=localhost:3000", "can reach services on this computer: localhost:3000", RiskHigh},
		{"net=127.0.0.1", "can reach services on this computer: 127.0.0.1", RiskHigh},
		{"net=[::1]:8080", "can reach services on this computer: [::1]:8080", RiskHigh},
		{"net=192.168.1.4", "can reach devices on your local network: 192.168.1.4", RiskHigh},
		{"net=printer.local", "can reach devices on your local network: printer.local", RiskHigh},
		{"net=api.github.com", "can connect to api.github.com", RiskMedium},
		{"net=*.example.com:443", "can connect to example.com and all of its subdomains on port 443", RiskMedium},
		{"import=esm.sh", "can load and run code from esm.sh", RiskMedium},
		{"env=HOME", "can read the environment variable HOME", RiskLow},
		{"env=AWS_*", "can read environment variables whose names start with AWS_", RiskMedium},
	}
	for _, c := range cases {
		h := mustParse(t, script, "// @permissions "+c.header+"\n")
		ds := h.Describe()
		require.Len(t, ds, 1, c.header)
		assert.Equal(t, c.text, ds[0].Text, c.header)
		assert.Equal(t, c.risk, ds[0].Risk, c.header)
	}

	h := mustParse(t, script, "// @permissions forms page-js sites=shop.example,*.bank.example\n// @timeout none\n")
	texts := map[string]string{}
	for _, d := range h.Describe() {
		texts[d.Grant.String()] = d.Text
	}
	assert.Equal(t, "can fill in and submit forms in your browser tabs on *.bank.example, shop.example", texts["forms"])
	assert.Equal(t, "limits its form filling and page code to shop.example", texts["sites=shop.example"])
	assert.Equal(t, "can keep running until you stop it", texts["timeout=none"])

	// With a browser grant, the write= grants are where pages' downloads
	// may be saved, and say so.
	h = mustParse(t, script, "// @permissions forms write=results\n")
	var write Description
	for _, d := range h.Describe() {
		if d.Grant.Key == "write" {
			write = d
		}
	}
	// The grant's value is the path as the system resolved it (on
	// Windows, its long form), which is also what the user is shown.
	results := write.Grant.Value
	assert.True(t, strings.EqualFold(filepath.Base(results), "results"), results)
	assert.Equal(t, "can create, change and delete "+results+" and everything inside; can save files that pages download into "+results, write.Text)

	// A site on this computer or the local network is a grant of its own,
	// worded as net= words it; a wildcard never reaches one.
	h = mustParse(t, script, "// @permissions browser sites=localhost:8080,127.0.0.1,192.168.1.4,*.localhost,shop.example\n")
	texts = map[string]string{}
	risks := map[string]Risk{}
	for _, d := range h.Describe() {
		texts[d.Grant.String()] = d.Text
		risks[d.Grant.String()] = d.Risk
	}
	assert.Equal(t, "can see and control your browser tabs, including sites where you are signed in, and reach from them services on this computer (127.0.0.1, localhost:8080) and devices on your local network (192.168.1.4)", texts["browser"])
	assert.Equal(t, "can open and read, in your browser tabs, pages of services on this computer, and let the pages it drives send them requests: localhost:8080", texts["sites=localhost:8080"])
	assert.Equal(t, "can open and read, in your browser tabs, pages of devices on your local network, and let the pages it drives send them requests: 192.168.1.4", texts["sites=192.168.1.4"])
	assert.Equal(t, RiskHigh, risks["sites=127.0.0.1"])
	assert.Equal(t, "limits its form filling and page code to *.localhost", texts["sites=*.localhost"])
	assert.Equal(t, RiskLow, risks["sites=shop.example"])

	// Grants known only by canonical form are worded without guessing
	// whether a path is a folder.
	ds := Grants{{"read", filepath.Join(dir, "results")}}.Describe()
	assert.Equal(t, "can read "+filepath.Join(dir, "results")+" (and everything inside, if it is or becomes a folder)", ds[0].Text)
	assert.Equal(t, "high", RiskHigh.String())
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(p, 0o755))
}

func write(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		90 * time.Minute: "1h30m", 2 * time.Hour: "2h", 15 * time.Minute: "15m", 90 * time.Second: "1m30s",
		time.Second: "1s", 24 * time.Hour: "24h", time.Hour + time.Second: "1h0m1s", 10 * time.Hour: "10h",
	} {
		assert.Equal(t, want, fmtDuration(d))
	}
}
