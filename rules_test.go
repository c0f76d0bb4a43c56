package automation_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/tranquil/automation"

// pkg is what go list says about one package of the module.
type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	Doc        string
	Imports    []string
	Deps       []string
	GoFiles    []string
	// IgnoredGoFiles are the files for other platforms, which count as
	// the package's code too.
	IgnoredGoFiles []string
	TestGoFiles    []string
	XTestGoFiles   []string
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "-deps=false", "./...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = p
	}
	require.NoError(t, cmd.Wait())
	require.Contains(t, pkgs, "runner", "go list ran in the module")
	return pkgs
}

// A rule says what a package must not depend on, and why.
type rule struct {
	pkg    string   // the package, relative to the module ("" is the root)
	direct bool     // only its own imports count, not what they import
	banned []string // import paths; "x/..." is x and everything below it
	why    string
}

// rules are the package boundaries of CONTRIBUTING.md, enforced.
var rules = []rule{
	{pkg: "permissions", banned: []string{"net/http", "os/exec", module + "/rpc/...", module + "/cdp/...", module + "/runner/...", module + "/consent/..."},
		why: "permissions only computes: it parses headers and flags and starts nothing, serves nothing"},
	{pkg: "display", banned: []string{"net/http", "os/exec", module + "/..."},
		why: "display is a leaf: text rules only"},
	{pkg: "errcode", banned: []string{"net/http", "os/exec", module + "/..."},
		why: "errcode is a leaf: the one table of error codes that every package shares"},
	{pkg: "consent", banned: []string{"net/http", "os/exec", module + "/rpc/...", module + "/cdp/...", module + "/runner/..."},
		why: "consent stores approvals and asks the host's prompter; it knows nothing of runs or browsers"},
	{pkg: "history", banned: []string{"net/http", "os/exec", module + "/rpc/...", module + "/cdp/...", module + "/runner/...", module + "/permissions/..."},
		why: "history is storage only"},
	{pkg: "mirror", banned: []string{"net/http", "os/exec", module + "/rpc/...", module + "/cdp/...", module + "/runner/..."},
		why: "mirror copies files; it runs nothing"},
	{pkg: "runner", direct: true, banned: []string{"github.com/mafredri/...", "github.com/coder/websocket/..."},
		why: "runner drives browsers through package cdp and talks to scripts through package rpc, never the protocols underneath"},
	{pkg: "runner/internal/proc", banned: []string{"net/http", module + "/runner", module + "/rpc/...", module + "/cdp/...", module + "/permissions/...", module + "/launch/...", module + "/consent/..."},
		why: "process supervision starts and stops a process; scripts, grants and browsers are the runner's business"},
	{pkg: "runner/internal/audit", banned: []string{"os/exec", "net/http", module + "/rpc/...", module + "/cdp/...", module + "/permissions/..."},
		why: "the audit pipe reads deno's report and judges it by the flags alone; it starts nothing"},
	{pkg: "runner/internal/modgraph", banned: []string{"net/http", module + "/rpc/...", module + "/cdp/...", module + "/trace/...", module + "/history/...", module + "/consent/..."},
		why: "the module check reads a script's graph with deno; it drives no browser, serves nothing and keeps no record"},
	{pkg: "cdp", banned: []string{module + "/runner/...", module + "/rpc/...", module + "/permissions/...", module + "/consent/...", module + "/history/..."},
		why: "cdp is a browser client; scripts, grants and runs are the runner's business"},
	{pkg: "rpc", banned: []string{module + "/cdp/...", module + "/runner/...", module + "/consent/...", module + "/history/..."},
		why: "the bridge authenticates and carries calls; what the calls do is the runner's"},
	{pkg: "rpc/capnweb", banned: []string{"net", "net/http", "os/exec", "github.com/coder/websocket/...", module + "/..."},
		why: "the protocol is transport-agnostic: sockets and WebSockets are rpc/wsconn's, behind capnweb.Transport"},
	{pkg: "rpc/wsconn", banned: []string{module + "/rpc", module + "/runner/...", module + "/cdp/...", module + "/permissions/..."},
		why: "the WebSocket transport carries messages; it knows nothing of the bridge or what the messages mean"},
	{pkg: "launch", banned: []string{module + "/runner/...", module + "/rpc/...", module + "/permissions/...", module + "/consent/...", module + "/history/..."},
		why: "starting and stopping browsers knows nothing of scripts or runs"},
	{pkg: "cdp", direct: true, banned: []string{"os/exec"},
		why: "the browser client connects to browsers; starting them is package launch's"},
	{pkg: "cdp/internal/wire", banned: []string{"net", "net/http", "os/exec", "github.com/mafredri/...", "github.com/coder/websocket/...", module + "/..."},
		why: "the protocol's framing is pure, so that its tests and fuzzers run without a browser"},
	{pkg: "cdp/sitepolicy", banned: []string{"net", "net/http", "os/exec", "github.com/mafredri/...", "github.com/coder/websocket/...", module + "/cdp", module + "/runner/...", module + "/permissions/..."},
		why: "the site rules decide from addresses alone (no lookup, no browser), so that they test and fuzz without Chromium"},
	{pkg: "cdp/textpattern", banned: []string{"net", "net/http", "os/exec", "github.com/mafredri/...", "github.com/coder/websocket/...", module + "/cdp", module + "/runner/...", module + "/rpc/..."},
		why: "a script's patterns are compiled and matched in the host alone, so that their limits test and fuzz without Chromium"},
	{pkg: "trace", banned: []string{"net/http", "os/exec", module + "/rpc/...", module + "/cdp/...", module + "/runner/...", module + "/history/..."},
		why: "a trace is types, a bounded recorder and an encoding; the runner fills it, history stores it"},
	{pkg: "internal/sitematch", banned: []string{"os/exec", "net/http", "regexp", module + "/cdp/...", module + "/runner/...", module + "/permissions/..."},
		why: "sites= matching is pure and goes into the testing kit's WebAssembly (internal/ruleswasm), which must stay small"},
	{pkg: "internal/importtable", banned: []string{"os/exec", "net/http", "regexp", module + "/..."},
		why: "the import table is pure and goes into the testing kit's WebAssembly (internal/ruleswasm), where regexp alone would add 140 KB"},
	{pkg: "internal/ospath", banned: []string{"os/exec", "net/http", "fmt", "regexp", module + "/..."},
		why: "path rules only, for permissions and pathguard; it goes into the testing kit's WebAssembly too"},
	{pkg: "internal/textcut", banned: []string{"os", "os/exec", "net", "net/http", module + "/..."},
		why: "bounding text is pure, shared by every package that keeps or quotes what a page or a script chose"},
	{pkg: "internal/execstart", banned: []string{"net", "net/http", module + "/..."},
		why: "starting a program is a leaf that launch and the runner's process supervision share"},
	{pkg: "traceview", banned: []string{"os/exec", module + "/rpc/...", module + "/cdp/...", module + "/runner/..."},
		why: "the view shows what a Source gives it; it runs nothing and drives no browser"},
}

// TestPackageRules fails when a package gains an import its rule forbids,
// and when a rule names a package that does not exist: a renamed or moved
// package would otherwise leave its rule guarding nothing.
func TestPackageRules(t *testing.T) {
	pkgs := listPackages(t)
	all := slices.Collect(maps.Values(pkgs))
	var outside []string // banned patterns outside the module
	for _, r := range rules {
		for _, b := range r.banned {
			if !matches(b, module+"/...") {
				outside = append(outside, b)
				continue
			}
			if !slices.ContainsFunc(all, func(p pkg) bool { return matches(p.ImportPath, b) }) {
				t.Errorf("the rule for %q bans %s, which names no package of the module", r.pkg, b)
			}
		}
	}
	found := listPatterns(t, outside)
	for _, b := range outside {
		if !slices.ContainsFunc(found, func(p string) bool { return matches(p, b) }) {
			t.Errorf("a rule bans %s, which names no package of the standard library or a dependency", b)
		}
	}
	for _, r := range rules {
		p, ok := pkgs[r.pkg]
		require.True(t, ok, "rule for a package that does not exist: %s", r.pkg)
		deps := p.Deps
		if r.direct {
			deps = p.Imports
		}
		for _, d := range deps {
			for _, b := range r.banned {
				if matches(d, b) {
					t.Errorf("%s imports %s (through its dependencies unless it is its own import): %s", r.pkg, d, r.why)
				}
			}
		}
	}
}

// listPatterns returns the import paths of the packages that patterns
// ("x" or "x/...") name among the standard library and the module's
// dependencies.
func listPatterns(t *testing.T, patterns []string) []string {
	t.Helper()
	args := append([]string{"list", "-e", "-find", "-f", "{{if not .Error}}{{.ImportPath}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	require.NoError(t, err, "go %s", strings.Join(args, " "))
	return strings.Fields(string(out))
}

func matches(path, pattern string) bool {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == tree || strings.HasPrefix(path, tree+"/")
	}
	return path == pattern
}

// TestOnePackageDocPerDirectory: every package has a doc.go holding its
// package comment, and no other file holds one.
func TestOnePackageDocPerDirectory(t *testing.T) {
	for rel, p := range listPackages(t) {
		if !slices.Contains(p.GoFiles, "doc.go") {
			t.Errorf("%s (%s) has no doc.go", rel, p.Dir)
			continue
		}
		assert.NotEmpty(t, p.Doc, "%s: doc.go holds no package comment", rel)
		for _, f := range p.GoFiles {
			if f == "doc.go" {
				continue
			}
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			require.NoError(t, err)
			if hasPackageComment(string(src)) {
				t.Errorf("%s: %s holds a package comment too; keep it in doc.go", rel, f)
			}
		}
	}
}

// hasPackageComment reports whether a line comment ends right above the
// package clause (a build constraint and its blank line do not count).
func hasPackageComment(src string) bool {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "package ") {
			return i > 0 && strings.HasPrefix(lines[i-1], "//") && !strings.HasPrefix(lines[i-1], "//go:build")
		}
	}
	return false
}

// noLeakGate are the packages that start goroutines but need no leak gate,
// and why.
var noLeakGate = map[string]string{
	"bench/rpc/harness": "a benchmark command without tests: its server serves until the process exits",
}

// TestGoroutinesHaveALeakGate: every package whose code has a go
// statement runs its tests under a leak gate, a TestMain in a file that
// imports internal/leakcheck, so a goroutine without a stop fails the
// package's tests instead of piling up in a host.
func TestGoroutinesHaveALeakGate(t *testing.T) {
	pkgs := listPackages(t)
	for rel, why := range noLeakGate {
		p, ok := pkgs[rel]
		if !ok {
			t.Errorf("noLeakGate names %s, which does not exist", rel)
			continue
		}
		if len(goStatements(t, p)) == 0 {
			t.Errorf("noLeakGate names %s, which starts no goroutines (%s)", rel, why)
		}
	}
	for rel, p := range pkgs {
		gos := goStatements(t, p)
		if len(gos) == 0 {
			continue
		}
		gate := hasLeakGate(t, p)
		_, exempt := noLeakGate[rel]
		switch {
		case gate && exempt:
			t.Errorf("%s has a leak gate; take it out of noLeakGate", rel)
		case !gate && !exempt:
			t.Errorf("%s starts goroutines (%s) but its tests have no leak gate: add\n\tfunc TestMain(m *testing.M) { leakcheck.Main(m) }", rel, strings.Join(gos, ", "))
		}
	}
}

// goStatements returns where the package's code, on any platform, has a go
// statement.
func goStatements(t *testing.T, p pkg) []string {
	t.Helper()
	var at []string
	fset := token.NewFileSet()
	for _, name := range slices.Concat(p.GoFiles, p.IgnoredGoFiles) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				pos := fset.Position(g.Pos())
				at = append(at, fmt.Sprintf("%s:%d", name, pos.Line))
			}
			return true
		})
	}
	return at
}

// hasLeakGate reports whether the package's tests, internal or external,
// declare TestMain in a file that imports internal/leakcheck (or, for
// leakcheck itself, in any test file).
func hasLeakGate(t *testing.T, p pkg) bool {
	t.Helper()
	fset := token.NewFileSet()
	for _, name := range slices.Concat(p.TestGoFiles, p.XTestGoFiles) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		if !slices.ContainsFunc(f.Decls, func(d ast.Decl) bool {
			fn, ok := d.(*ast.FuncDecl)
			return ok && fn.Recv == nil && fn.Name.Name == "TestMain"
		}) {
			continue
		}
		return p.ImportPath == module+"/internal/leakcheck" || slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool {
			return s.Path.Value == `"`+module+`/internal/leakcheck"`
		})
	}
	return false
}
