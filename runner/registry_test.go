package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/importtable"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner/internal/modgraph"
)

// jsrPkg is one version of a package as a JSR registry publishes it: its
// files (path relative to the package root → source) and its exports
// (subpath → "./file"), which need not include a root module ".": on
// jsr.io @std/fmt and @std/testing have none.
type jsrPkg struct {
	version string
	files   map[string]string
	exports map[string]string
}

// fakeJSR serves packages the way jsr.io does, on loopback: a package's
// meta.json (its versions and the latest), each version's
// <version>_meta.json (a manifest of every file with its size and
// "sha256-…" checksum, which deno checks each download against, and the
// exports map) and the files under <version>/. It counts the requests it
// answers and knows the integrity deno records for each version: the
// SHA-256 of its <version>_meta.json.
//
// It serves under a root of its own (Root), never at "/": the tests share
// one deno cache, which keys what it holds by URL, and a later registry
// on a reused port would otherwise be answered from an earlier one's
// cached files (a test serves tampered packages on purpose).
type fakeJSR struct {
	*httptest.Server
	Root      string // "http://127.0.0.1:port/<unique>/": the Config.JSR
	prefix    string // "/<unique>"
	mu        sync.Mutex
	requests  []string
	integrity map[string]string // "@std/fmt@1.0.8" → hex SHA-256 of its version manifest
}

func (f *fakeJSR) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// lock is a deno.lock (version 5) that pins every version the registry
// serves to the integrity of what it serves: the seed Prepare verifies
// the stand-in's packages against, as the shipped std.lock is for jsr.io.
func (f *fakeJSR) lock(t testing.TB) []byte {
	t.Helper()
	jsr := map[string]any{}
	for nv, sum := range f.integrity {
		jsr[nv] = map[string]string{"integrity": sum}
	}
	data, err := json.MarshalIndent(map[string]any{"version": "5", "jsr": jsr}, "", "  ")
	require.NoError(t, err)
	return data
}

// serveJSR publishes pkgs (name → its versions); the last version listed
// of a package is its latest.
func serveJSR(t testing.TB, pkgs map[string][]jsrPkg) *fakeJSR {
	t.Helper()
	routes := map[string][]byte{}
	f := &fakeJSR{integrity: map[string]string{}}
	for name, versions := range pkgs {
		scope, pkg, _ := strings.Cut(strings.TrimPrefix(name, "@"), "/")
		all := map[string]any{}
		for _, v := range versions {
			manifest := map[string]any{}
			for file, src := range v.files {
				sum := sha256.Sum256([]byte(src))
				manifest["/"+file] = map[string]any{"size": len(src), "checksum": "sha256-" + hex.EncodeToString(sum[:])}
				routes["/"+name+"/"+v.version+"/"+file] = []byte(src)
			}
			for sub, file := range v.exports {
				_, ok := v.files[strings.TrimPrefix(file, "./")]
				require.True(t, ok, "%s@%s exports %s as %s, which it does not have", name, v.version, sub, file)
			}
			vmeta, err := json.Marshal(map[string]any{"manifest": manifest, "exports": v.exports})
			require.NoError(t, err)
			routes["/"+name+"/"+v.version+"_meta.json"] = vmeta
			sum := sha256.Sum256(vmeta)
			f.integrity[name+"@"+v.version] = hex.EncodeToString(sum[:])
			all[v.version] = map[string]any{}
		}
		meta, err := json.Marshal(map[string]any{"scope": scope, "name": pkg, "latest": versions[len(versions)-1].version, "versions": all})
		require.NoError(t, err)
		routes["/"+name+"/meta.json"] = meta
	}
	f.prefix = "/" + uuid.NewString()
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, under := strings.CutPrefix(r.URL.Path, f.prefix)
		f.mu.Lock()
		f.requests = append(f.requests, p)
		f.mu.Unlock()
		body, ok := routes[p]
		if !under || !ok {
			http.NotFound(w, r)
			return
		}
		if path.Ext(p) == ".ts" {
			w.Header().Set("Content-Type", "application/typescript")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(body)
	}))
	f.Root = f.URL + f.prefix + "/"
	t.Cleanup(f.Close)
	return f
}

// stdShapes are exports of the @std packages the SDK maps, as their own
// deno.json files (denoland/std) declare them: a few of each package's
// subpaths, and no root module for @std/fmt and @std/testing.
var stdShapes = map[string][]string{
	"@std/assert":      {".", "./assert", "./equals"},
	"@std/async":       {".", "./delay", "./pool"},
	"@std/collections": {".", "./chunk", "./sort-by"},
	"@std/csv":         {".", "./parse", "./stringify"},
	"@std/encoding":    {".", "./base64", "./hex"},
	"@std/fmt":         {"./bytes", "./colors", "./duration", "./printf"},
	"@std/fs":          {".", "./exists", "./walk"},
	"@std/http":        {".", "./cookie", "./status"},
	"@std/path":        {".", "./join", "./posix", "./posix/join", "./windows"},
	"@std/testing":     {"./bdd", "./mock", "./snapshot", "./time", "./types"},
	"@std/text":        {".", "./to-kebab-case"},
}

// stdShapeFile is the file an export names: "./posix" → "posix/mod.ts".
func stdShapeFile(name string, exports []string, sub string) string {
	if sub == "." {
		return "mod.ts"
	}
	for _, e := range exports {
		if strings.HasPrefix(e, sub+"/") {
			return strings.TrimPrefix(sub, "./") + "/mod.ts"
		}
	}
	return strings.TrimPrefix(sub, "./") + ".ts"
}

// sdkPins are the @std packages the SDK's import map pins.
func sdkPins(t testing.TB) []importtable.Pin {
	t.Helper()
	sdk, err := MaterializeSDK(t.TempDir())
	require.NoError(t, err)
	pins, err := modgraph.StdPins(sdk.Config)
	require.NoError(t, err)
	require.Len(t, pins, 11, "the SDK maps eleven @std packages")
	return pins
}

// stdStandIns are stand-ins for every @std package the SDK pins, at the
// pinned version and shaped as the real one (stdShapes): each export a
// module whose `name` says which it is ("@std/fmt/colors"). A test
// replaces a package where it needs more.
func stdStandIns(t testing.TB) map[string][]jsrPkg {
	t.Helper()
	pkgs := map[string][]jsrPkg{}
	for _, p := range sdkPins(t) {
		shape, ok := stdShapes[p.Name]
		require.True(t, ok, "no shape for %s", p.Name)
		v := jsrPkg{version: p.Version, files: map[string]string{}, exports: map[string]string{}}
		for _, sub := range shape {
			file := stdShapeFile(p.Name, shape, sub)
			v.files[file] = "export const name = \"" + p.Name + strings.TrimPrefix(sub, ".") + "\";\n"
			v.exports[sub] = "./" + file
		}
		pkgs[p.Name] = []jsrPkg{v}
	}
	return pkgs
}

// pinOf is the version the SDK pins name to.
func pinOf(t testing.TB, name string) string {
	t.Helper()
	for _, p := range sdkPins(t) {
		if p.Name == name {
			return p.Version
		}
	}
	t.Fatalf("the SDK pins no %s", name)
	return ""
}

// newStdMgr is a manager whose Config.JSR is reg, with reg's own lock as
// the seed Prepare verifies against (newMgr has run Prepare).
func newStdMgr(t testing.TB, reg *fakeJSR, mod func(*Config)) *mgrEnv {
	t.Helper()
	return newMgr(t, func(c *Config) {
		c.JSR = reg.Root
		c.stdLock = reg.lock(t)
		if mod != nil {
			mod(c)
		}
	})
}

// With a registry the host allows, the SDK's @std promise holds: Prepare
// caches the mapped packages, Plan accepts a script that imports one, the
// run loads it from the cache without asking the registry anything, and
// an import the cache cannot satisfy is refused before the run starts.
func TestStdModulesFromTheHostsRegistry(t *testing.T) {
	pkgs := stdStandIns(t)
	async := pkgs["@std/async"][0]
	async.files["mod.ts"] = "export * from \"./pool.ts\";\n"
	// Runs fn over items, at most limit at a time, yielding results in
	// the order of items.
	async.files["pool.ts"] = `export async function* pooledMap<T, R>(limit: number, items: Iterable<T>, fn: (t: T) => Promise<R>): AsyncGenerator<R> {
  const all = [...items];
  const out: Promise<R>[] = [];
  let next = 0;
  const worker = async () => { while (next < all.length) { const i = next++; out[i] = fn(all[i]); await out[i]; } };
  await Promise.all(Array.from({ length: Math.min(limit, all.length) }, worker));
  for (const r of out) yield await r;
}
`
	// Not an export, so Prepare never caches it.
	async.files["_internal.ts"] = "export const x = 1;\n"
	reg := serveJSR(t, pkgs)
	e := newStdMgr(t, reg, nil)
	for name := range pkgs {
		assert.Contains(t, reg.seen(), "/"+name+"/meta.json", "Prepare cached %s", name)
	}
	before := len(reg.seen())
	ctx := context.Background()

	ok := e.script(t, "fanout.ts", `// @permissions none
import { pooledMap } from "@std/async";
import { pooledMap as again } from "@std/async/pool";
import { name } from "@std/text";
import { context } from "tranquil/automation";
const out = [];
for await (const n of pooledMap(2, [1, 2, 3], async (n) => n * 10)) out.push(n);
await context.result({ out, same: pooledMap === again, name });
`)
	plan, err := e.m.Plan(ctx, Request{Script: ok})
	require.NoError(t, err)
	require.NoError(t, plan.Refused)
	u := reg.Listener.Addr().String()
	assert.Contains(t, plan.Args, "--allow-import="+u, "the registry is the only import host")
	assert.Contains(t, plan.Args, "--cached-only")
	assert.Contains(t, plan.Args, "--frozen")
	assert.NotContains(t, plan.Args, "--no-remote")
	assert.NotContains(t, plan.Args, "--no-lock")

	_, entry := e.run(t, Request{Script: ok})
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	assert.JSONEq(t, `{"out":[10,20,30],"same":true,"name":"@std/text"}`, string(entry.Result))

	for name, src := range map[string]string{
		"not an export":   `import { x } from "@std/async/_internal"; console.log(x);`,
		"another package": `import "jsr:@scope/other@^1";`,
		"another version": `import "jsr:@std/async@^1";`,
		"a web address":   `import "https://esm.sh/left-pad";`,
	} {
		p := e.script(t, strings.ReplaceAll(name, " ", "-")+".ts", "// @permissions none\n"+src+"\n")
		plan, err := e.m.Plan(ctx, Request{Script: p})
		require.NoError(t, err)
		assert.ErrorIs(t, plan.Refused, ErrRemoteImport, name)
	}
	assert.Len(t, reg.seen(), before, "plans and runs never ask the registry: %v", reg.seen()[before:])
}

// Every @std short name loads after Prepare, by its root module where the
// package has one and by a subpath of each, from a registry shaped as
// jsr.io is: @std/fmt and @std/testing export subpaths only, so caching a
// package by its name alone fails.
func TestStdShortNamesAndSubpathsLoad(t *testing.T) {
	reg := serveJSR(t, stdStandIns(t))
	e := newStdMgr(t, reg, nil)
	var src strings.Builder
	src.WriteString("// @permissions none\nimport { context } from \"tranquil/automation\";\nconst names: string[] = [];\n")
	var want []string
	i := 0
	for _, p := range sdkPins(t) {
		for _, sub := range stdShapes[p.Name] {
			spec := p.Name + strings.TrimPrefix(sub, ".")
			fmt.Fprintf(&src, "import { name as n%d } from %q;\nnames.push(n%d);\n", i, spec, i)
			want = append(want, spec)
			i++
		}
	}
	src.WriteString("await context.result(names);\n")
	require.Contains(t, want, "@std/fmt/colors")
	require.Contains(t, want, "@std/testing/bdd")
	require.Contains(t, want, "@std/path/posix")
	_, entry := e.run(t, Request{Script: e.script(t, "all.ts", src.String())})
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	var got []string
	require.NoError(t, json.Unmarshal(entry.Result, &got))
	assert.Equal(t, want, got)
}

// Prepare caches the pinned version of each package, never the newest
// one the registry offers, and only content whose version manifest
// matches the integrity the seed lock records.
func TestStdPinnedVersionsAndIntegrity(t *testing.T) {
	pkgs := stdStandIns(t)
	pinned := pinOf(t, "@std/async")
	newer := jsrPkg{version: "1.99.0", files: map[string]string{"mod.ts": "export const name = \"newer\";\n"}, exports: map[string]string{".": "./mod.ts"}}
	pkgs["@std/async"] = append(pkgs["@std/async"], newer)
	reg := serveJSR(t, pkgs)
	e := newStdMgr(t, reg, nil)
	entry := e.runScript(t, "pinned.ts", "// @permissions none\nimport { name } from \"@std/async\";\nimport { context } from \"tranquil/automation\";\nawait context.result(name);\n")
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	assert.JSONEq(t, `"@std/async"`, string(entry.Result))
	assert.Contains(t, reg.seen(), "/@std/async/"+pinned+"_meta.json")
	assert.NotContains(t, reg.seen(), "/@std/async/1.99.0_meta.json", "the newest version is never fetched")

	// A registry whose pinned version is not the content the lock records:
	// Prepare refuses it and caches nothing of it.
	other := stdStandIns(t)
	other["@std/fmt"][0].files["colors.ts"] = "export const name = \"someone else's colors\";\n"
	bad := serveJSR(t, other)
	seed := reg.lock(t) // the integrity of the first registry's @std/fmt
	m, err := New(Config{DataDir: t.TempDir(), CacheDir: testenv.DenoCacheDir(t), DenoPath: testenv.Deno(t),
		Gate: e.m.cfg.Gate, JSR: bad.Root, stdLock: seed})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	err = m.Prepare(context.Background())
	require.ErrorIs(t, err, ErrRegistry)
	t.Logf("Prepare: %v", err)
	assert.Contains(t, err.Error(), "Integrity check failed")
	assert.Contains(t, err.Error(), "@std/fmt@"+pinOf(t, "@std/fmt"))
}

// A module cache changed after Prepare is refused at run time, with
// deno's integrity error naming the package: a changed byte, and a change
// that also rewrites the cached version manifest to match (which only the
// lock catches).
func TestStdTamperedCacheIsRefused(t *testing.T) {
	reg := serveJSR(t, stdStandIns(t))
	e := newStdMgr(t, reg, nil)
	pinned := pinOf(t, "@std/text")
	script := e.script(t, "text.ts", "// @permissions none\nimport { name } from \"@std/text\";\nimport { context } from \"tranquil/automation\";\nawait context.result(name);\n")
	_, entry := e.run(t, Request{Script: script})
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)

	u, err := url.Parse(reg.Root)
	require.NoError(t, err)
	cached := func(p string) string {
		sum := sha256.Sum256([]byte(reg.prefix + p))
		return filepath.Join(e.m.cfg.CacheDir, "remote", "http", strings.Replace(u.Host, ":", "_PORT", 1), hex.EncodeToString(sum[:]))
	}
	mod, meta := cached("/@std/text/"+pinned+"/mod.ts"), cached("/@std/text/"+pinned+"_meta.json")
	orig, err := os.ReadFile(mod)
	require.NoError(t, err)
	origMeta, err := os.ReadFile(meta)
	require.NoError(t, err)
	const was, is = `"@std/text"`, `"@std/tex!"`
	require.Contains(t, string(orig), was)
	tampered := strings.Replace(string(orig), was, is, 1)

	for _, withManifest := range []bool{false, true} {
		require.NoError(t, os.WriteFile(mod, []byte(tampered), 0o644))
		if withManifest {
			body, _, _ := strings.Cut(tampered, "\n// denoCacheMetadata=")
			oldSum := sha256.Sum256([]byte(strings.Replace(body, is, was, 1)))
			newSum := sha256.Sum256([]byte(body))
			m := strings.Replace(string(origMeta), hex.EncodeToString(oldSum[:]), hex.EncodeToString(newSum[:]), 1)
			require.NotEqual(t, string(origMeta), m, "the manifest names the module's checksum")
			require.NoError(t, os.WriteFile(meta, []byte(m), 0o644))
		}
		_, entry := e.run(t, Request{Script: script})
		t.Logf("manifest rewritten %v: %s: %s\n%s", withManifest, entry.State, entry.Reason, entry.Output)
		assert.NotEqual(t, history.StateSucceeded, entry.State, "manifest rewritten %v: %s", withManifest, entry.Result)
		assert.NotContains(t, string(entry.Result), "tex!")
		assert.Contains(t, entry.Reason+entry.Output, "Integrity check failed", "manifest rewritten %v", withManifest)
		assert.Contains(t, entry.Reason+entry.Output, "@std/text", "manifest rewritten %v", withManifest)
	}
	require.NoError(t, os.WriteFile(mod, orig, 0o644))
	require.NoError(t, os.WriteFile(meta, origMeta, 0o644))
	_, entry = e.run(t, Request{Script: script})
	assert.Equal(t, history.StateSucceeded, entry.State, "the restored cache loads again: %s\n%s", entry.Reason, entry.Output)
}

// Without a registry an @std import is refused before the run, saying so.
func TestStdModulesWithoutARegistry(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "std.ts", "// @permissions none\nimport { pooledMap } from \"@std/async\";\nconsole.log(pooledMap);\n")
	plan, err := e.m.Plan(context.Background(), Request{Script: p})
	require.NoError(t, err)
	require.ErrorIs(t, plan.Refused, ErrRemoteImport)
	assert.Contains(t, plan.Refused.Error(), "this app names no JSR registry, so its scripts have no @std packages")
}

// The script is deno's main module: import.meta.main is true in it and
// false in what it imports, as in a plain deno run.
func TestScriptIsTheMainModule(t *testing.T) {
	e := newMgr(t, nil)
	e.script(t, "lib.ts", "export const libMain = import.meta.main;\n")
	entry := e.runScript(t, "main.ts", `// @permissions read=lib.ts
import { context } from "tranquil/automation";
import { libMain } from "./lib.ts";
await context.result({ main: import.meta.main, libMain });
`)
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	assert.JSONEq(t, `{"main":true,"libMain":false}`, string(entry.Result))
}
