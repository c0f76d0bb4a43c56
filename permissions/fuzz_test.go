package permissions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tranquil/automation/internal/pathguard"
)

var fuzzSeeds = []string{
	"// @permissions none\n",
	"#!/usr/bin/env deno\n// @permissions browser net=api.github.com run=git read=input.txt write=out.md\n// @timeout 15m\n",
	"// @permissions read=\"a b.txt\",c.txt write=../x env=HOME,AWS_* import=esm.sh sites=*.a.com forms\n",
	"// @permissions net=[::1]:80,10.0.0.1,*.x.org:443,localhost\n// @timeout none\n",
	"// @permissions read=up/x write=link\n",
	"code()\n// @permissions browser\n",
	"// @permissions none\u2028// @permissions browser\n",
	"// @permissions read=\"\\\"q\\\\\"\n",
}

// fuzzScript builds a script directory with symlinks that point at the
// directory itself, its parent and elsewhere, so random paths meet them.
func fuzzScript(f testing.TB) string {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	dir := filepath.Join(root, "p", "s")
	for _, d := range []string{dir, filepath.Join(root, "else")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range map[string]string{"up": "..", "self": ".", "link": filepath.Join(root, "else"), "root": "/"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			f.Fatal(err)
		}
	}
	return filepath.Join(dir, "job.ts")
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	script := fuzzScript(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		h, err := Parse(src, script)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Msg == "" || pe.Kind == nil {
				t.Fatalf("error is not a complete *ParseError: %#v", err)
			}
			return
		}
		checkHeader(t, h)
		gs, err := ParseCanonical(h.Canonical())
		if err != nil {
			t.Fatalf("canonical form %q does not parse back: %v", h.Canonical(), err)
		}
		if gs.String() != h.Canonical() {
			t.Fatalf("canonical round trip: %q != %q", gs.String(), h.Canonical())
		}
		if len(h.Describe()) != len(h.Grants()) {
			t.Fatal("one description per grant")
		}
	})
}

func FuzzParseFlags(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "127.0.0.1:9222")
	}
	script := fuzzScript(f)
	c := flagConfig(script)
	f.Fuzz(func(t *testing.T, src []byte, deny string) {
		h, err := Parse(src, script)
		if err != nil {
			return
		}
		cfg := c
		cfg.DenyLoopback = []string{deny}
		flags, err := Flags(h, cfg)
		if err != nil {
			if !errors.Is(err, ErrFlagConfig) && !errors.Is(err, ErrDeniedEndpoint) && !errors.Is(err, ErrMachinery) {
				t.Fatalf("untyped flag error: %v", err)
			}
			return
		}
		if err := CheckFlags(flags); err != nil {
			t.Fatal(err)
		}
		declaredRead := append(resolved(h.Read), cfg.Bootstrap, h.ScriptPath, cfg.SDKDir)
		for _, f := range flags {
			name, val, _ := strings.Cut(f, "=")
			switch name {
			case "--allow-read":
				for _, p := range strings.Split(val, ",") {
					if !slices.Contains(declaredRead, p) {
						t.Fatalf("read grant %q is neither machinery nor declared", p)
					}
				}
			case "--allow-write":
				for _, p := range strings.Split(val, ",") {
					if !slices.Contains(resolved(h.Write), p) {
						t.Fatalf("write grant %q was not declared", p)
					}
				}
			case "--allow-net":
				if !strings.HasPrefix(val, cfg.BridgeAddr) {
					t.Fatalf("the bridge comes first: %s", f)
				}
			case "--deny-net":
				if !strings.Contains(val, "172.16.") || !strings.Contains(val, "192.168.") && !slices.ContainsFunc(h.Net, func(n string) bool { return strings.HasPrefix(n, "192.168.") }) {
					t.Fatalf("private ranges missing: %s", f)
				}
			}
		}
	})
}

// checkHeader asserts the invariants every successful parse keeps.
func checkHeader(t *testing.T, h *Header) {
	t.Helper()
	if h.None && len(h.Grants()) > 1+btoi(h.TimeoutDeclared) {
		t.Fatalf("none with other grants: %s", h.Canonical())
	}
	if !h.None && len(h.Grants()) == btoi(h.TimeoutDeclared) {
		t.Fatalf("a header granting nothing must say none: %q", h.Canonical())
	}
	for _, p := range append(slices.Clone(h.Read), h.Write...) {
		for _, s := range []string{p.Resolved, p.Lexical} {
			if !filepath.IsAbs(s) || strings.ContainsAny(s, ",\x00") {
				t.Fatalf("bad path %q", s)
			}
			if pathguard.Contains(s, h.ScriptDir) {
				t.Fatalf("grant %q covers the script directory %q", s, h.ScriptDir)
			}
		}
	}
	for _, n := range append(slices.Clone(h.Net), h.Import...) {
		if n == "*" || strings.ContainsAny(n, "/, @") {
			t.Fatalf("bad host %q", n)
		}
	}
	for _, e := range h.Env {
		if msg, _ := checkEnv(e); msg != "" {
			t.Fatalf("env %q: %s", e, msg)
		}
	}
	if h.NoTimeout != (h.Timeout == 0) || (!h.NoTimeout && (h.Timeout < MinTimeout || h.Timeout > MaxTimeout)) {
		t.Fatalf("timeout out of bounds: %v none=%v", h.Timeout, h.NoTimeout)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
