package permissions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/testenv"
)

// kitRulesHarness runs the testing kit's rules (the SDK's kit_rules.ts,
// which loads this code compiled to WebAssembly) over the inputs on stdin
// and prints what it decided, in the shape goRules gives.
const kitRulesHarness = `
import { capabilities, HeaderError, parseHeader, siteAllowed } from "%RULES%";
const input = JSON.parse(new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer()));
const parse = input.parse.map((b64) => {
  const src = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  try {
    const h = parseHeader(src, input.script);
    return { ok: true, caps: capabilities(h), sites: h.sites, net: h.net, import: h.import, run: h.run, env: h.env,
      read: h.read, write: h.write, timeoutMs: h.timeoutMs };
  } catch (e) {
    if (!(e instanceof HeaderError)) throw e;
    return { ok: false, kind: e.kind, line: e.line, column: e.column, message: e.message };
  }
});
const sites = input.sites.map(([url, site]) => siteAllowed(url, [site]));
console.log(JSON.stringify({ parse, sites }));
`

type ruleOutcome struct {
	OK        bool     `json:"ok"`
	Kind      string   `json:"kind,omitempty"`
	Line      int      `json:"line,omitempty"`
	Column    int      `json:"column,omitempty"`
	Message   string   `json:"message,omitempty"`
	Caps      []string `json:"caps,omitempty"`
	Sites     []string `json:"sites,omitempty"`
	Net       []string `json:"net,omitempty"`
	Import    []string `json:"import,omitempty"`
	Run       []string `json:"run,omitempty"`
	Env       []string `json:"env,omitempty"`
	Read      []string `json:"read,omitempty"`
	Write     []string `json:"write,omitempty"`
	TimeoutMs *int64   `json:"timeoutMs,omitempty"`
}

// norm makes empty lists nil, which JSON cannot tell apart, and drops the
// system's own words from a message that quotes a failed file lookup:
// Windows says "CreateFile …: Invalid name." where Deno, asked the same,
// gives the kit an I/O error.
func (o ruleOutcome) norm() ruleOutcome {
	for _, l := range []*[]string{&o.Caps, &o.Sites, &o.Net, &o.Import, &o.Run, &o.Env, &o.Read, &o.Write} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	o.Message = systemWords.ReplaceAllString(o.Message, "$1: (the system's words)")
	return o
}

var systemWords = regexp.MustCompile(`(cannot (?:resolve|inspect) .*?|cannot resolve the script's directory): \w+ .*$`)

var kindNames = map[error]string{
	ErrNoHeader: "no_header", ErrSyntax: "syntax", ErrUnknownKey: "unknown_key", ErrBadValue: "bad_value",
	ErrBlanketPath: "blanket_path", ErrReserved: "reserved", ErrDuplicate: "duplicate", ErrTimeout: "timeout",
}

func goRules(src []byte, script string) ruleOutcome {
	h, err := Parse(src, script)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			return ruleOutcome{Kind: err.Error()}
		}
		return ruleOutcome{Kind: kindNames[pe.Kind], Line: pe.Line, Column: pe.Column, Message: pe.Error()}
	}
	o := ruleOutcome{OK: true, Sites: h.Sites, Net: h.Net, Import: h.Import, Run: h.Run, Env: h.Env}
	for _, c := range h.Capabilities() {
		o.Caps = append(o.Caps, string(c))
	}
	for _, p := range h.Read {
		o.Read = append(o.Read, p.Resolved)
	}
	for _, p := range h.Write {
		o.Write = append(o.Write, p.Resolved)
	}
	if !h.NoTimeout {
		ms := h.Timeout.Milliseconds()
		o.TimeoutMs = &ms
	}
	return o
}

// corpus reads the committed inputs of one fuzz target: each file's
// values, in order.
func corpus(t *testing.T, dir string) [][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out [][]string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		var vals []string
		for sc.Scan() {
			line := sc.Text()
			if line == "go test fuzz v1" || line == "" {
				continue
			}
			_, quoted, ok := strings.Cut(line, "(")
			require.True(t, ok, "%s: %s", e.Name(), line)
			v, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
			require.NoError(t, err, "%s: %s", e.Name(), line)
			vals = append(vals, v)
		}
		require.NoError(t, sc.Err())
		out = append(out, vals)
	}
	require.NotEmpty(t, out, dir)
	return out
}

// TestKitRulesAgree holds the offline fake host to the app: the kit's
// rules, this code compiled to WebAssembly and called through the SDK's
// loader, must decide every committed fuzz input of the header parser and
// of cdp.SiteAllowed exactly as the Go code does, message included. They
// are the same code, so this tests the build, the loader and what crosses
// between Go and JavaScript: bytes that are not UTF-8, lists, null.
func TestKitRulesAgree(t *testing.T) {
	deno := testenv.Deno(t)
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	script := fuzzScript(t)

	var srcs [][]byte
	for _, s := range fuzzSeeds {
		srcs = append(srcs, []byte(s))
	}
	for _, target := range []string{"FuzzParse", "FuzzParseFlags"} {
		for _, vals := range corpus(t, filepath.Join("testdata", "fuzz", target)) {
			srcs = append(srcs, []byte(vals[0]))
		}
	}
	var sites [][2]string
	for _, vals := range corpus(t, filepath.Join(root, "cdp", "sitepolicy", "testdata", "fuzz", "FuzzAllowed")) {
		sites = append(sites, [2]string{vals[0], vals[1]})
	}
	sites = append(sites, siteCases...)

	in := map[string]any{"script": script, "parse": srcs, "sites": sites}
	body, err := json.Marshal(in)
	require.NoError(t, err)
	dir := t.TempDir()
	harness := filepath.Join(dir, "harness.js")
	rules := "file://" + filepath.ToSlash(filepath.Join(root, "runner", "sdk", "kit_rules.ts"))
	require.NoError(t, os.WriteFile(harness, []byte(strings.ReplaceAll(kitRulesHarness, "%RULES%", rules)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, deno, "run", "--no-lock", "--no-prompt", "--no-config",
		"--allow-read="+filepath.Dir(filepath.Dir(filepath.Dir(script)))+","+filepath.Join(root, "runner", "sdk"), harness)
	cmd.Env = []string{"DENO_DIR=" + testenv.DenoCacheDir(t), "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1", "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	var got struct {
		Parse []ruleOutcome `json:"parse"`
		Sites []bool        `json:"sites"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Len(t, got.Parse, len(srcs))
	require.Len(t, got.Sites, len(sites))
	for i, src := range srcs {
		assert.Equal(t, goRules(src, script).norm(), got.Parse[i].norm(), "header %q", src)
	}
	t.Logf("%d headers, %d sites= cases", len(srcs), len(sites))
	for i, c := range sites {
		assert.Equal(t, cdp.SiteAllowed(c[0], []string{c[1]}), got.Sites[i], "url %q site %q", c[0], c[1])
	}
}

// siteCases are sites= inputs where a browser's URL parser and Go's part
// ways, besides the fuzz corpus.
var siteCases = [][2]string{
	{"https://shop.example/", "Shop.Example."},
	{"http://SHOP.example:8080/x", "shop.example"},
	{"https://a.b.cdn.example/", "*.cdn.example"},
	{"https://cdn.example/", "*.cdn.example"},
	{"file:///shop.example", "shop.example"},
	{"not a url", "shop.example"},
	{"https://bücher.example/", "bücher.example"},
	{"https://bücher.example/", "xn--bcher-kva.example"},
	{"http://[::1]:8080/", "::1"},
	{"http://[::1]:8080/", "[::1]"},
	{"https://shop%2eexample/", "shop.example"},
	{"https://shop.example/%zz", "shop.example"},
	{"https://shop.example/#%zz", "shop.example"},
	{"https://user@shop.example/", "shop.example"},
	{"https://a:b:c/", "a"},
	{"https://[fe80::1%25eth0]/", "fe80::1%eth0"},
	{"https:shop.example", "shop.example"},
	{"HTTPS://SHOP.EXAMPLE/", "shop.example"},
	{"https://shop.example./", "shop.example"},
	{"https://shop.example/\t", "shop.example"},
	{"https://shop.example/#\t", "shop.example"},
}
