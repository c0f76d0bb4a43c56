package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/importtable"
	"github.com/tranquil/automation/internal/sitematch"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/permissions"
)

// TestWasmIsFresh fails when a Go file that goes into the committed
// runner/sdk/rules.wasm.gz changed since it was built: the kit would
// then judge by old rules.
func TestWasmIsFresh(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	sum, err := sourcesHash(root)
	require.NoError(t, err)
	require.Equal(t, sources, sum, "runner/sdk/rules.wasm.gz is stale: run go generate ./internal/ruleswasm/gen and commit both files")

	f, err := os.Open(filepath.Join(root, wasmFile))
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	raw, err := io.Copy(io.Discard, zr)
	require.NoError(t, err)
	t.Logf("%s: %d bytes gzipped, %d raw", wasmFile, fi.Size(), raw)
	// The root's size test refuses tracked files over 1 MiB.
	assert.Less(t, fi.Size(), int64(1<<20))
}

// answersHarness loads the kit's rules as the testing kit does and prints
// its answers to the cases on stdin, and how long the load took.
const answersHarness = `
const t0 = performance.now();
const kit = await import(Deno.args[0]);
const loadMs = performance.now() - t0;
const input = JSON.parse(new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer()));
const headers = input.headers.map((src) => {
  try {
    const h = kit.parseHeader(src, input.script);
    return { ok: true, caps: kit.capabilities(h), read: h.read, timeoutMs: h.timeoutMs };
  } catch (e) {
    return { ok: false, message: e.message };
  }
});
const sites = input.sites.map(([url, site]) => kit.siteAllowed(url, [site]));
const imports = input.imports.map(([spec, hosts]) => kit.importRefusal(spec, hosts ? ["esm.sh"] : [], [], input.registry) ?? "");
console.log(JSON.stringify({ loadMs, headers, sites, imports }));
`

// TestWasmAnswers runs the committed WebAssembly through the SDK's loader
// under deno, with the permission the kit's tests give (reading the SDK
// and the script's folder), and checks a few decisions of each function
// against the Go code itself.
func TestWasmAnswers(t *testing.T) {
	deno := testenv.Deno(t)
	root, err := moduleRoot()
	require.NoError(t, err)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	script := filepath.Join(dir, "s", "script.ts")
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s", "data.txt"), nil, 0o644))

	headers := []string{
		"// @permissions browser clipboard read=data.txt\n// @timeout 2m\n",
		"// @permissions none\n// @timeout none\n",
		"// @permissions brwoser\n",
		"// @permissions read=.\n",
		"code()\n",
		"// @permissions \xff\n",
	}
	sites := [][2]string{{"https://a.shop.example/x", "*.shop.example"}, {"https://shop.example/", "*.shop.example"}, {"http://0x7f.1:8080/", "127.0.0.1:8080"}}
	registry := []string{"jsr:@std/fmt@1.0.8"}
	imports := []struct {
		spec  string
		hosts bool
	}{{`C:\lib.ts`, false}, {"jsr:@std/fmt@1.0.8/colors", false}, {"jsr:@std/fmt@0.9.0", false}, {"npm:left-pad@1", false}, {"https://esm.sh/x", true}, {"ftp://x.example/y.js", true}, {"node:fs", false}}
	var importCases [][2]any
	for _, c := range imports {
		importCases = append(importCases, [2]any{c.spec, c.hosts})
	}
	in, err := json.Marshal(map[string]any{"script": script, "headers": headers, "sites": sites, "imports": importCases, "registry": registry})
	require.NoError(t, err)
	harness := filepath.Join(dir, "harness.js")
	require.NoError(t, os.WriteFile(harness, []byte(answersHarness), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sdk := filepath.Join(root, "runner", "sdk")
	cmd := exec.CommandContext(ctx, deno, "run", "--no-lock", "--no-prompt", "--no-config", "--allow-read="+dir+","+sdk,
		harness, "file://"+filepath.ToSlash(filepath.Join(sdk, "kit_rules.ts")))
	cmd.Env = []string{"DENO_DIR=" + testenv.DenoCacheDir(t), "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1", "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	var got struct {
		LoadMs  float64 `json:"loadMs"`
		Headers []struct {
			OK        bool     `json:"ok"`
			Message   string   `json:"message"`
			Caps      []string `json:"caps"`
			Read      []string `json:"read"`
			TimeoutMs *int64   `json:"timeoutMs"`
		} `json:"headers"`
		Sites   []bool   `json:"sites"`
		Imports []string `json:"imports"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	t.Logf("the kit loaded its rules in %.0f ms", got.LoadMs)

	require.Len(t, got.Headers, len(headers))
	for i, src := range headers {
		h, err := permissions.Parse([]byte(src), script)
		g := got.Headers[i]
		var pe *permissions.ParseError
		if errors.As(err, &pe) {
			assert.False(t, g.OK, "%q", src)
			assert.Equal(t, pe.Error(), g.Message, "%q", src)
			continue
		}
		require.NoError(t, err)
		require.True(t, g.OK, "%q: %s", src, g.Message)
		var caps, read []string
		for _, c := range h.Capabilities() {
			caps = append(caps, string(c))
		}
		for _, p := range h.Read {
			read = append(read, p.Resolved)
		}
		assert.Equal(t, caps, g.Caps, "%q", src)
		assert.Equal(t, len(read), len(g.Read), "%q", src)
		if len(read) > 0 {
			assert.Equal(t, read, g.Read, "%q", src)
		}
		if h.NoTimeout {
			assert.Nil(t, g.TimeoutMs, "%q", src)
		} else if assert.NotNil(t, g.TimeoutMs, "%q", src) {
			assert.Equal(t, h.Timeout.Milliseconds(), *g.TimeoutMs, "%q", src)
		}
	}
	require.Len(t, got.Sites, len(sites))
	for i, c := range sites {
		assert.Equal(t, sitematch.Allowed(c[0], []string{c[1]}), got.Sites[i], "%q on %q", c[0], c[1])
	}
	require.Len(t, got.Imports, len(imports))
	pin, ok := importtable.ParsePin(registry[0])
	require.True(t, ok)
	for i, c := range imports {
		want, _ := importtable.Table{Hosts: c.hosts, Std: []importtable.Pin{pin}}.Refusal(c.spec)
		assert.Equal(t, want, got.Imports[i], "%s", c.spec)
	}
}

// TestRunsDoNotLoadTheRules: only the testing kit imports the loader; a
// run's module graph (main.ts, which imports mod.ts) never holds it, so
// no run reads or compiles the WebAssembly.
func TestRunsDoNotLoadTheRules(t *testing.T) {
	deno := testenv.Deno(t)
	root, err := moduleRoot()
	require.NoError(t, err)
	sdk := filepath.Join(root, "runner", "sdk")
	graph := func(entry string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, deno, "info", "--json", "--no-lock", "--no-remote", "--no-npm",
			"--config="+filepath.Join(sdk, "deno.json"), filepath.Join(sdk, entry))
		cmd.Env = []string{"DENO_DIR=" + testenv.DenoCacheDir(t), "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1", "PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		require.NoError(t, err, "deno info %s", entry)
		var info struct {
			Modules []struct {
				Specifier string `json:"specifier"`
			} `json:"modules"`
		}
		require.NoError(t, json.Unmarshal(out, &info))
		var mods []string
		for _, m := range info.Modules {
			mods = append(mods, filepath.Base(m.Specifier))
		}
		return mods
	}
	assert.Contains(t, graph("testing.ts"), "kit_rules.ts")
	for _, entry := range []string{"main.ts", "mod.ts"} {
		mods := graph(entry)
		assert.Contains(t, mods, "mod.ts", entry)
		assert.NotContains(t, mods, "kit_rules.ts", entry)
		assert.NotContains(t, mods, "go_wasm.ts", entry)
	}
}
