package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// jsrRegistry serves packages the way a JSR registry does (a package's
// meta.json, a version's manifest and exports, its files), one version
// each, on loopback. It counts the requests it answers.
type fakeJSR struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func (f *fakeJSR) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// serveJSR publishes pkgs ("@std/async" → file name → source) as version
// 1.0.0 of each; every file is an export of its own and mod.ts is ".".
func serveJSR(t *testing.T, pkgs map[string]map[string]string) *fakeJSR {
	t.Helper()
	const version = "1.0.0"
	routes := map[string][]byte{}
	for name, files := range pkgs {
		manifest := map[string]any{}
		exports := map[string]string{}
		for file, src := range files {
			sum := sha256.Sum256([]byte(src))
			manifest["/"+file] = map[string]any{"size": len(src), "checksum": "sha256-" + hex.EncodeToString(sum[:])}
			routes["/"+name+"/"+version+"/"+file] = []byte(src)
			sub := "./" + strings.TrimSuffix(file, ".ts")
			if file == "mod.ts" {
				sub = "."
			}
			exports[sub] = "./" + file
		}
		scope, pkg, _ := strings.Cut(strings.TrimPrefix(name, "@"), "/")
		meta, err := json.Marshal(map[string]any{"scope": scope, "name": pkg, "latest": version, "versions": map[string]any{version: map[string]any{}}})
		require.NoError(t, err)
		routes["/"+name+"/meta.json"] = meta
		vmeta, err := json.Marshal(map[string]any{"manifest": manifest, "exports": exports})
		require.NoError(t, err)
		routes["/"+name+"/"+version+"_meta.json"] = vmeta
	}
	f := &fakeJSR{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.URL.Path)
		f.mu.Unlock()
		body, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if path.Ext(r.URL.Path) == ".ts" {
			w.Header().Set("Content-Type", "application/typescript")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(f.Close)
	return f
}

// stdNames are the @std packages the SDK's import map names.
func stdNames(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	sdk, err := MaterializeSDK(dir)
	require.NoError(t, err)
	specs, err := stdPackages(sdk.Config)
	require.NoError(t, err)
	var names []string
	for _, s := range specs {
		name, _, _ := strings.Cut(strings.TrimPrefix(s, "jsr:"), "@^")
		names = append(names, name)
	}
	require.Len(t, names, 11, "the SDK maps eleven @std packages")
	return names
}

// stdStandIns are stand-ins for every @std package the SDK maps, each a
// mod.ts exporting its name, for a test to replace where it needs more.
func stdStandIns(t *testing.T) map[string]map[string]string {
	t.Helper()
	pkgs := map[string]map[string]string{}
	for _, name := range stdNames(t) {
		pkgs[name] = map[string]string{"mod.ts": "export const name = \"" + name + "\";\n"}
	}
	return pkgs
}

// With a registry the host allows, the SDK's @std promise holds: Prepare
// caches the mapped packages, Plan accepts a script that imports one, the
// run loads it from the cache without asking the registry anything, and
// an import the cache cannot satisfy is refused before the run starts.
func TestStdModulesFromTheHostsRegistry(t *testing.T) {
	pkgs := stdStandIns(t)
	pkgs["@std/async"] = map[string]string{
		"mod.ts": "export * from \"./pool.ts\";\n",
		// Runs fn over items, at most limit at a time, yielding results in
		// the order of items.
		"pool.ts": `export async function* pooledMap<T, R>(limit: number, items: Iterable<T>, fn: (t: T) => Promise<R>): AsyncGenerator<R> {
  const all = [...items];
  const out: Promise<R>[] = [];
  let next = 0;
  const worker = async () => { while (next < all.length) { const i = next++; out[i] = fn(all[i]); await out[i]; } };
  await Promise.all(Array.from({ length: Math.min(limit, all.length) }, worker));
  for (const r of out) yield await r;
}
`,
		// Not reached from mod.ts, so Prepare never caches it.
		"delay.ts": "export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));\n",
	}
	reg := serveJSR(t, pkgs)
	e := newMgr(t, func(c *Config) { c.JSR = reg.URL })
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
	u := strings.TrimPrefix(reg.URL, "http://")
	assert.Contains(t, plan.Args, "--allow-import="+u, "the registry is the only import host")
	assert.Contains(t, plan.Args, "--cached-only")
	assert.NotContains(t, plan.Args, "--no-remote")

	_, entry := e.run(t, Request{Script: ok})
	require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
	assert.JSONEq(t, `{"out":[10,20,30],"same":true,"name":"@std/text"}`, string(entry.Result))

	for name, src := range map[string]string{
		"uncached subpath": `import { delay } from "@std/async/delay"; console.log(delay);`,
		"another package":  `import "jsr:@scope/other@^1";`,
		"a web address":    `import "https://esm.sh/left-pad";`,
	} {
		p := e.script(t, strings.ReplaceAll(name, " ", "-")+".ts", "// @permissions none\n"+src+"\n")
		plan, err := e.m.Plan(ctx, Request{Script: p})
		require.NoError(t, err)
		assert.ErrorIs(t, plan.Refused, ErrRemoteImport, name)
	}
	assert.Len(t, reg.seen(), before, "plans and runs never ask the registry: %v", reg.seen()[before:])
}

// Without a registry an @std import is refused before the run, saying so.
func TestStdModulesWithoutARegistry(t *testing.T) {
	e := newMgr(t, nil)
	p := e.script(t, "std.ts", "// @permissions none\nimport { pooledMap } from \"@std/async\";\nconsole.log(pooledMap);\n")
	plan, err := e.m.Plan(context.Background(), Request{Script: p})
	require.NoError(t, err)
	require.ErrorIs(t, plan.Refused, ErrRemoteImport)
	assert.Contains(t, plan.Refused.Error(), "no remote code")
}

func TestJSRConfigIsChecked(t *testing.T) {
	for _, bad := range []string{"jsr.io", "ftp://jsr.io/", "https://user@jsr.io/", "https:///", "https://jsr.io/?q=1"} {
		_, err := parseJSR(bad)
		assert.Error(t, err, bad)
	}
	r, err := parseJSR("https://jsr.io")
	require.NoError(t, err)
	assert.Equal(t, jsrRegistry{url: "https://jsr.io/", host: "jsr.io"}, r)
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
