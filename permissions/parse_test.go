package permissions

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/winetest"
)

// scriptDir makes a real directory holding a script and returns the
// script's path.
func scriptDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(root, "proj", "scripts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return filepath.Join(dir, "job.ts")
}

func mustParse(t *testing.T, script, src string) *Header {
	t.Helper()
	h, err := Parse([]byte(src), script)
	require.NoError(t, err, "source:\n%s", src)
	return h
}

func TestParseHeaderBlock(t *testing.T) {
	script := scriptDir(t)
	cases := []struct {
		name string
		src  string
	}{
		{"plain", "// @permissions browser\nconsole.log(1)\n"},
		{"shebang", "#!/usr/bin/env -S deno run\n// @permissions browser\n"},
		{"blank lines and prose", "// My script\n\n//   does things\n// @permissions browser\n\nimport x from 'y'\n"},
		{"no space after slashes", "//@permissions browser\n"},
		{"crlf", "// title\r\n// @permissions browser\r\ncode()\r\n"},
		{"bom", "\uFEFF// @permissions browser\n"},
		{"indented comment", "   // @permissions browser\n"},
		{"other directives ignored", "// @author someone\n// @permissions browser\n"},
		{"no trailing newline", "// @permissions browser"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := mustParse(t, script, c.src)
			assert.True(t, h.Browser)
			assert.Equal(t, DefaultTimeout, h.Timeout)
			assert.False(t, h.TimeoutDeclared)
		})
	}
}

func TestParseGrants(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "input.txt"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "results"), 0o755))

	h := mustParse(t, script, `// @permissions browser clipboard forms page-js sites=example.com,*.shop.example net=api.github.com,Example.COM:443,10.1.2.3,[::1]:8080,*.example.org net=api.github.com run=git,`+jq+` read=input.txt,"my notes.txt" write=results,../out.md env=HOME,AWS_* import=esm.sh
// @timeout 15m
`)
	assert.True(t, h.Browser && h.Clipboard && h.Forms && h.PageJS && !h.None)
	assert.Equal(t, []string{"*.shop.example", "example.com"}, h.Sites)
	assert.Equal(t, []string{"*.example.org", "10.1.2.3", "[::1]:8080", "api.github.com", "example.com:443"}, h.Net)
	assert.Equal(t, []string{jq, "git"}, h.Run)
	assert.Equal(t, []string{"AWS_*", "HOME"}, h.Env)
	assert.Equal(t, []string{"esm.sh"}, h.Import)
	require.Len(t, h.Read, 2)
	assert.Equal(t, filepath.Join(dir, "input.txt"), h.Read[0].Resolved)
	assert.Equal(t, File, h.Read[0].Kind)
	assert.Equal(t, filepath.Join(dir, "my notes.txt"), h.Read[1].Resolved)
	assert.Equal(t, Missing, h.Read[1].Kind)
	require.Len(t, h.Write, 2)
	assert.Equal(t, filepath.Join(filepath.Dir(dir), "out.md"), h.Write[0].Resolved)
	assert.Equal(t, filepath.Join(dir, "results"), h.Write[1].Resolved)
	assert.Equal(t, Dir, h.Write[1].Kind)
	assert.Equal(t, 15*time.Minute, h.Timeout)
	assert.True(t, h.TimeoutDeclared)
}

func TestParseNoneAndTimeoutNone(t *testing.T) {
	h := mustParse(t, scriptDir(t), "// @permissions none\n// @timeout none\n")
	assert.True(t, h.None)
	assert.True(t, h.NoTimeout)
	assert.Zero(t, h.Timeout)
	assert.Equal(t, "none timeout=none", h.Canonical())
}

func TestParseQuotedValues(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	// A comma inside a path cannot be passed to deno, so the quoted form is
	// refused with a clear message rather than split.
	_, err := Parse([]byte(`// @permissions read="a, b.txt"`), script)
	require.ErrorIs(t, err, ErrBadValue)
	if runtime.GOOS == "windows" {
		// A quote cannot be part of a Windows file name: refused.
		_, err := Parse([]byte(`// @permissions write="say \"hi\".txt"`), script)
		require.ErrorIs(t, err, ErrBadValue)
		h := mustParse(t, script, `// @permissions write="say hi.txt"`)
		assert.Equal(t, filepath.Join(dir, `say hi.txt`), h.Write[0].Resolved)
		return
	}
	h := mustParse(t, script, `// @permissions write="say \"hi\".txt"`)
	assert.Equal(t, filepath.Join(dir, `say "hi".txt`), h.Write[0].Resolved)
}

type errCase struct {
	name string
	src  string
	kind error
	msg  string // substring of the message
	line int
	col  int
}

func TestParseErrors(t *testing.T) {
	script := scriptDir(t)
	cases := []errCase{
		{"missing header", "console.log(1)\n", ErrNoHeader, `add a comment at the very top of the script, for example "// @permissions none"`, 0, 0},
		{"empty file", "", ErrNoHeader, "no @permissions header", 0, 0},
		{"after code", "import x from 'y'\n// @permissions browser\n", ErrNoHeader, "comes after code (line 1)", 2, 4},
		{"after block comment", "/* license */\n// @permissions browser\n", ErrNoHeader, "comes after code", 2, 4},
		{"hidden by CR", "// harmless\r@permissions browser\n", ErrNoHeader, "no @permissions header", 0, 0},
		{"hidden by LS", "// @permissions none\u2028// @permissions browser\n", ErrDuplicate, "appears twice (first on line 1)", 2, 4},
		{"duplicate", "// @permissions none\n// @permissions browser\n", ErrDuplicate, "appears twice (first on line 1)", 2, 4},
		{"duplicate timeout", "// @permissions none\n// @timeout 1m\n// @timeout 2m\n", ErrDuplicate, "@timeout appears twice", 3, 4},
		{"directive typo", "// @permision browser\n", ErrSyntax, `did you mean "@permissions"`, 1, 4},
		{"directive case", "// @Permissions browser\n", ErrSyntax, `did you mean "@permissions"`, 1, 4},
		{"empty", "// @permissions\n", ErrSyntax, "write \"@permissions none\"", 1, 4},
		{"unknown key typo", "// @permissions brwoser\n", ErrUnknownKey, `unknown key "brwoser", did you mean "browser"?`, 1, 17},
		{"unknown key case", "// @permissions Browser\n", ErrUnknownKey, `did you mean "browser"? keys are lower case`, 1, 17},
		{"unknown key far", "// @permissions teleport\n", ErrUnknownKey, "known keys are none, browser", 1, 17},
		{"deno flag", "// @permissions --allow-net=x.com\n", ErrUnknownKey, "write net=… instead of --allow-net=…", 1, 17},
		{"none with others", "// @permissions none browser\n", ErrSyntax, "none must stand alone", 1, 22},
		{"none after others", "// @permissions browser none\n", ErrSyntax, "none must stand alone", 1, 17},
		{"none twice", "// @permissions none none\n", ErrSyntax, "none appears twice", 1, 22},
		{"bare with value", "// @permissions browser=yes\n", ErrBadValue, "browser takes no value", 1, 17},
		{"valued without value", "// @permissions net\n", ErrBadValue, "net needs a value, for example net=api.example.com", 1, 17},
		{"empty value", "// @permissions net=\n", ErrBadValue, "empty value", 1, 21},
		{"double comma", "// @permissions net=a.com,,b.com\n", ErrBadValue, "empty value", 1, 27},
		{"unclosed quote", "// @permissions read=\"abc\n", ErrSyntax, "never closed", 1, 22},
		{"partial quote", "// @permissions read=a\"b c\"\n", ErrSyntax, "quoted as a whole", 1, 22},
		{"spaces around equals", "// @permissions net =api.example.com\n", ErrBadValue, "net needs a value", 1, 17},
		{"value after spaced equals", "// @permissions browser =x\n", ErrSyntax, "no spaces around =", 1, 25},
		{"commas between keys", "// @permissions browser,clipboard\n", ErrSyntax, "separate keys with spaces, not commas: browser clipboard", 1, 17},
		{"sites without browser", "// @permissions clipboard sites=example.com\n", ErrBadValue, "none of browser, forms or page-js is declared", 1, 27},
		{"bidi override", "// @permissions net=a.com\u202e\n", ErrSyntax, "invisible character U+202E", 1, 26},
		{"zero width", "// @permissions net=a\u200b.com\n", ErrSyntax, "invisible character U+200B", 1, 22},
		{"nbsp", "// @permissions browser\u00a0clipboard\n", ErrSyntax, "unusual space", 1, 24},
		{"control char", "// @permissions browser\x01\n", ErrSyntax, "invisible character U+0001", 1, 24},
		{"invalid utf8", "// @permissions browser\xff\n", ErrSyntax, "not valid UTF-8", 1, 24},
		// Timeouts.
		{"timeout no unit", "// @permissions none\n// @timeout 90\n", ErrTimeout, "write 90s, 90m or 90h", 2, 13},
		{"timeout junk", "// @permissions none\n// @timeout soon\n", ErrTimeout, "is not a duration", 2, 13},
		{"timeout too small", "// @permissions none\n// @timeout 10ms\n", ErrTimeout, "below the minimum of 1s", 2, 13},
		{"timeout zero", "// @permissions none\n// @timeout 0s\n", ErrTimeout, "below the minimum", 2, 13},
		{"timeout negative", "// @permissions none\n// @timeout -5m\n", ErrTimeout, "below the minimum", 2, 13},
		{"timeout too big", "// @permissions none\n// @timeout 25h\n", ErrTimeout, "above the maximum of 24h", 2, 13},
		{"timeout two values", "// @permissions none\n// @timeout 1m 2m\n", ErrTimeout, "takes one value", 2, 4},
		{"timeout empty", "// @permissions none\n// @timeout\n", ErrTimeout, "takes one value", 2, 4},
	}
	runErrCases(t, script, cases)
}

func runErrCases(t *testing.T, script string, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Parse([]byte(c.src), script)
			require.Error(t, err, "parsed as %+v", h)
			require.Nil(t, h)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "not a *ParseError: %T %v", err, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Contains(t, pe.Msg, c.msg)
			assert.Equal(t, c.line, pe.Line, "line of %v", err)
			assert.Equal(t, c.col, pe.Column, "column of %v", err)
			assert.Equal(t, strings.ToLower(pe.Msg[:1]), pe.Msg[:1], "messages start lower case")
			assert.False(t, strings.HasSuffix(pe.Msg, "."), "no trailing punctuation")
		})
	}
}

func TestParseHostValues(t *testing.T) {
	script := scriptDir(t)
	good := map[string]string{
		"api.github.com":        "api.github.com",
		"API.GitHub.com":        "api.github.com",
		"example.com:443":       "example.com:443",
		"example.com:0443":      "example.com:443",
		"localhost":             "localhost",
		"localhost:3000":        "localhost:3000",
		"127.0.0.1":             "127.0.0.1",
		"192.0.2.7:8080":        "192.0.2.7:8080",
		"[::1]":                 "[::1]",
		"[2001:DB8::1]:443":     "[2001:db8::1]:443",
		"[::ffff:192.0.2.1]":    "192.0.2.1",
		"*.example.com":         "*.example.com",
		"*.example.com:443":     "*.example.com:443",
		"under_score.example":   "under_score.example",
		"xn--bcher-kva.example": "xn--bcher-kva.example",
	}
	for in, want := range good {
		h := mustParse(t, script, "// @permissions net="+in+"\n")
		assert.Equal(t, []string{want}, h.Net, in)
		h = mustParse(t, script, "// @permissions import="+in+"\n")
		assert.Equal(t, []string{want}, h.Import, in)
	}
	bad := []struct{ in, msg string }{
		{"*", "would allow every host"},
		{"https://x.com", "takes a host, not a URL; write net=x.com"},
		{"https://x.com:8443/path?q", "write net=x.com:8443"},
		{"https://user:pw@x.com/", "write net=x.com"},
		{"x.com/api", "without a path; write net=x.com"},
		{"user@x.com", "without a user name; write net=x.com"},
		{"x.com:1-100", "port ranges are not supported; list each port, like net=x.com:1"},
		{"x.com:0", "is not a port"},
		{"x.com:65536", "is not a port"},
		{"x.com:http", "is not a port"},
		{"x.com:", "gives no port"},
		{"x.com:+80", "is not a port"},
		{"::1", "IPv6 addresses must be in brackets: write net=[::1]"},
		{"[::1", "never closes"},
		{"[fe80::1%eth0]", "zone id"},
		{"[1.2.3.4]", "not an IPv6 address"},
		{"[::1]x", "text after ]"},
		{"a:b:c", "more than one colon"},
		{"2130706433", "unusual form"},
		{"0x7f.1", "unusual form"},
		{"10.1", "unusual form"},
		{"127.000.000.001", "unusual form"},
		{"1.2.3.4.5", "unusual form"},
		{"x.com.", "drop the trailing dot: write net=x.com"},
		{"*.com", "whole top-level domain"},
		{"a.*.com", "* may only open a name"},
		{"*x.com", "* may only open a name"},
		{"bücher.example", "xn-- form"},
		{"-bad.com", "starts or ends with -"},
		{"a..b", "empty or over-long label"},
		{"a$b.com", "character"},
		{":80", "has no host"},
	}
	for _, b := range bad {
		_, err := Parse([]byte("// @permissions net="+b.in+"\n"), script)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "net=%s: %v", b.in, err)
		assert.ErrorIs(t, err, ErrBadValue, b.in)
		assert.Contains(t, pe.Msg, b.msg, "net=%s", b.in)
		assert.Equal(t, 21, pe.Column, "the column points at the value: %s", b.in)
		assert.Equal(t, "net="+b.in, pe.Token)
	}
}

func TestParseSites(t *testing.T) {
	script := scriptDir(t)
	h := mustParse(t, script, "// @permissions forms sites=Example.com,*.shop.example,127.0.0.1,LOCALHOST:08080,[::1]:3000\n")
	assert.Equal(t, []string{"*.shop.example", "127.0.0.1", "[::1]:3000", "example.com", "localhost:8080"}, h.Sites)
	h = mustParse(t, script, "// @permissions browser sites=127.0.0.1:8080\n")
	assert.Equal(t, []string{"127.0.0.1:8080"}, h.Sites, "sites= scopes browser alone too")
	for in, msg := range map[string]string{
		"example.com:0":         "is not a port",
		"example.com:":          "gives no port",
		"https://example.com/x": "write sites=example.com",
		"*":                     "would allow every host",
	} {
		_, err := Parse([]byte("// @permissions forms sites="+in+"\n"), script)
		require.ErrorIs(t, err, ErrBadValue, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func TestParseEnv(t *testing.T) {
	script := scriptDir(t)
	h := mustParse(t, script, "// @permissions env=HOME,_X1,AWS_*,lower_case\n")
	assert.Equal(t, []string{"AWS_*", "HOME", "_X1", "lower_case"}, h.Env)
	bad := []struct {
		in   string
		kind error
		msg  string
	}{
		{"*", ErrBadValue, "would expose every variable"},
		{"1ABC", ErrBadValue, "not a variable name"},
		{"A-B", ErrBadValue, "not a variable name"},
		{"A*B", ErrBadValue, "only a trailing * is allowed"},
		{"*_TOKEN", ErrBadValue, "only a trailing * is allowed"},
		{"TRANQUIL_RPC_TOKEN", ErrReserved, "TRANQUIL_* variables carry the run's own connection"},
		{"tranquil_x", ErrReserved, "TRANQUIL_*"},
		{"TRANQUIL_*", ErrReserved, "reserved name"},
		{"DENO_DIR", ErrReserved, "could switch the sandbox off"},
		{"DENO_PERMISSION_BROKER_PATH", ErrReserved, "DENO_*"},
		{"DEN*", ErrReserved, "would include the reserved name DENO_*"},
		{"D*", ErrReserved, "would include the reserved name"},
		{"TRANQ*", ErrReserved, "would include the reserved name TRANQUIL_*"},
		{"LD_PRELOAD", ErrReserved, "changes how deno itself"},
		{"DYLD_INSERT_LIBRARIES", ErrReserved, "changes how deno itself"},
		{"HTTPS_PROXY", ErrReserved, "changes how deno itself"},
		{"https_proxy", ErrReserved, "changes how deno itself"},
		{"SSLKEYLOGFILE", ErrReserved, "changes how deno itself"},
		{"HTTP*", ErrReserved, "would include the reserved name HTTP_PROXY"},
		{"NPM_CONFIG_REGISTRY", ErrReserved, "changes how deno itself"},
	}
	for _, b := range bad {
		_, err := Parse([]byte("// @permissions env="+b.in+"\n"), script)
		require.ErrorIs(t, err, b.kind, b.in)
		assert.Contains(t, err.Error(), b.msg, b.in)
	}
}

func TestParseRun(t *testing.T) {
	script := scriptDir(t)
	h := mustParse(t, script, "// @permissions run=git,"+jq+",node18,clang++,python3.11\n")
	assert.Equal(t, []string{jq, "clang++", "git", "node18", "python3.11"}, h.Run)
	for in, msg := range map[string]string{
		"*":        "would let the script run any program",
		"./tool":   "relative path",
		"bin/tool": "relative path",
		"-x":       "not a command name",
		"a;b":      "not a command name",
		"$(id)":    "not a command name",
	} {
		_, err := Parse([]byte("// @permissions run="+in+"\n"), script)
		require.ErrorIs(t, err, ErrBadValue, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func TestParsePaths(t *testing.T) {
	winetest.RequireSymlinks(t)
	script := scriptDir(t)
	dir := filepath.Dir(script)
	outside := filepath.Join(filepath.Dir(filepath.Dir(dir)), "elsewhere")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "up")))
	require.NoError(t, os.Symlink(filepath.Dir(dir), filepath.Join(outside, "proj-link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out-link")))

	h := mustParse(t, script, "// @permissions read=out-link/data.csv,"+outside+"/abs.txt,../sibling\n")
	assert.Equal(t, []string{
		filepath.Join(outside, "abs.txt"),
		filepath.Join(outside, "data.csv"),
		filepath.Join(dir, "..", "sibling"),
	}, []string{h.Read[0].Resolved, h.Read[1].Resolved, h.Read[2].Resolved})
	assert.Equal(t, filepath.Join(dir, "out-link", "data.csv"), h.Read[1].Lexical, "the lexical form is kept beside the resolved one")

	bad := []struct {
		in   string
		kind error
		msg  string
	}{
		{".", ErrBlanketPath, "would grant the script's whole folder"},
		{"./", ErrBlanketPath, "would grant the script's whole folder"},
		{"..", ErrBlanketPath, "own folder or one of its parents"},
		{"../..", ErrBlanketPath, "own folder or one of its parents"},
		{"./sub/..", ErrBlanketPath, "own folder or one of its parents"},
		{dir, ErrBlanketPath, "own folder or one of its parents"},
		{filepath.VolumeName(dir) + string(filepath.Separator), ErrBlanketPath, "own folder or one of its parents"},
		{"up", ErrBlanketPath, "leads through a symlink to"},
		{"up/", ErrBlanketPath, "leads through a symlink to"},
		{outside + "/proj-link", ErrBlanketPath, "leads through a symlink to " + filepath.Dir(dir)},
		{"~/notes.txt", ErrBadValue, "~ is not expanded"},
		{"$HOME/notes.txt", ErrBadValue, "variables are not expanded"},
		{`\\server\share\x`, ErrBadValue, "network path"},
		{"//server/share/x", ErrBadValue, "network path"},
		{"${XDG_DATA_HOME}/x", ErrBadValue, "variables are not expanded"},
		{"%APPDATA%/x", ErrBadValue, "variables are not expanded"},
	}
	if runtime.GOOS != "windows" {
		bad = append(bad, []struct {
			in   string
			kind error
			msg  string
		}{
			{"/proc/self/environ", ErrBadValue, "under /proc"},
			{"/dev/sda", ErrBadValue, "under /dev"},
		}...)
	}
	for _, b := range bad {
		for _, key := range []string{"read", "write"} {
			_, err := Parse([]byte("// @permissions "+key+"="+b.in+"\n"), script)
			require.ErrorIs(t, err, b.kind, "%s=%s", key, b.in)
			assert.Contains(t, err.Error(), b.msg, "%s=%s", key, b.in)
		}
	}
	_, err := Parse([]byte("// @permissions read=\"a\x00b\"\n"), script)
	require.ErrorIs(t, err, ErrSyntax, "NUL is refused as a control character")
}

func TestParseRelativeScriptPath(t *testing.T) {
	_, err := Parse([]byte("// @permissions none\n"), "rel/job.ts")
	require.Error(t, err)
}

func TestCapabilities(t *testing.T) {
	script := scriptDir(t)
	cases := map[string][]Capability{
		"none":      {CapConfig, CapContext, CapPaneControls, CapUI},
		"browser":   {CapConfig, CapContext, CapPaneControls, CapTab, CapTabs, CapUI, CapWorkspace},
		"forms":     {CapConfig, CapContext, CapForms, CapPaneControls, CapTab, CapTabs, CapUI},
		"page-js":   {CapConfig, CapContext, CapPageJS, CapPaneControls, CapTab, CapTabs, CapUI},
		"clipboard": {CapClipboard, CapConfig, CapContext, CapPaneControls, CapUI},
		"net=a.com": {CapConfig, CapContext, CapPaneControls, CapUI},
		"browser forms page-js clipboard": {CapClipboard, CapConfig, CapContext, CapForms, CapPageJS,
			CapPaneControls, CapTab, CapTabs, CapUI, CapWorkspace},
	}
	for hdr, want := range cases {
		h := mustParse(t, script, "// @permissions "+hdr+"\n")
		assert.Equal(t, want, h.Capabilities(), hdr)
		for _, c := range want {
			assert.True(t, h.Has(c), "%s has %s", hdr, c)
		}
	}
	h := mustParse(t, script, "// @permissions none\n")
	assert.False(t, h.Has(CapTabs))
	assert.False(t, h.Has(CapClipboard))
}
