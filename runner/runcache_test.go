package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/filelock"
	"github.com/tranquil/automation/internal/testenv"
)

// newMgrOwnCache is newMgr over a shared deno cache of the test's own,
// which holds only the npm packages of the test cache (that newMgr
// prepares): so what runs do to a shared cache can be measured. A
// download would fail: the proxies Prepare honours are a closed loopback
// port, so its caching reads the packages from the copy and reaches
// nothing.
func newMgrOwnCache(t *testing.T, mod func(*Config)) *mgrEnv {
	t.Helper()
	newMgr(t, nil) // the test cache holds the SDK's packages
	cache := filepath.Join(t.TempDir(), "shared-cache")
	require.NoError(t, copyTree(filepath.Join(cache, "npm"), filepath.Join(testenv.DenoCacheDir(t), "npm")))
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		t.Setenv(k, "http://127.0.0.1:9")
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		t.Setenv(k, "")
	}
	return newMgr(t, func(c *Config) {
		c.CacheDir = cache
		if mod != nil {
			mod(c)
		}
	})
}

// treeState is every path under a shared cache with its size and
// modification time (none for links and folders), but for location_data,
// where scripts keep their localStorage (see scriptStores).
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == filepath.Join(dir, "location_data") {
			return filepath.SkipDir
		}
		out[p] = ""
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			out[p] = fmt.Sprintf("%d bytes, changed %s", fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		}
		return nil
	}))
	return out
}

// assertUnchanged fails when after differs from before, naming a few of
// the paths that do.
func assertUnchanged(t *testing.T, before, after map[string]string, what string) {
	t.Helper()
	if c := changes(before, after); len(c) > 0 {
		t.Errorf("%s: %d paths differ, such as %q", what, len(c), c[:min(len(c), 5)])
	}
}

// changes lists what differs between two treeStates.
func changes(before, after map[string]string) []string {
	var out []string
	for p, n := range after {
		if m, ok := before[p]; !ok {
			out = append(out, "added "+p)
		} else if m != n {
			out = append(out, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		}
	}
	return out
}

// scriptStores checks that the shared cache's location_data holds only
// the folders of the scripts' localStorage, each empty: the scripts
// stored nothing.
func scriptStores(t *testing.T, shared string) {
	t.Helper()
	root := filepath.Join(shared, "location_data")
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range ents {
		require.True(t, e.IsDir(), e.Name())
		inner, err := os.ReadDir(filepath.Join(root, e.Name()))
		require.NoError(t, err)
		assert.Empty(t, inner, "localStorage of %s", e.Name())
	}
}

// runCacheDirs lists the runs' cache folders under the manager's data
// dir, spares included.
func runCacheDirs(t *testing.T, e *mgrEnv) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(e.data, "runs", "run-*"))
	require.NoError(t, err)
	return dirs
}

// floodScript makes count modules of its own as data: URLs, JavaScript
// and TypeScript, each new in every run (its source holds the run's ID),
// and imports each.
const floodScript = `// @permissions none
// @timeout 60s
import { context } from "tranquil/automation";
const count = COUNT;
for (let i = 0; i < count; i++) {
  const pad = "x".repeat(2000);
  await import("data:application/javascript," + encodeURIComponent("export default " + i + "; // " + context.runId + pad));
  await import("data:application/typescript," + encodeURIComponent("const v: number = " + i + "; export default v; // " + context.runId + pad));
}
console.log("imported " + count);
`

// A script granted nothing that imports hundreds of modules it makes as
// data: URLs leaves the shared deno cache as it was, in files and bytes,
// run after run, and the seed runs start from too: all deno kept of them
// was in the run's own cache folder, which is gone once the run is.
func TestDataModuleFloodLeavesTheSharedCacheAlone(t *testing.T) {
	e := newMgrOwnCache(t, nil)
	script := e.script(t, "flood.ts", strings.Replace(floodScript, "COUNT", "300", 1))
	shared := e.m.cfg.CacheDir
	before := treeState(t, shared)
	waitCachesIdle(e.m)
	e.m.caches.mu.Lock()
	seed := e.m.caches.seed
	e.m.caches.mu.Unlock()
	require.NotEmpty(t, seed, "Prepare made the runs' seed")
	seedBefore := treeState(t, seed)

	for i := range 2 {
		r, entry := e.run(t, Request{Script: script})
		require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
		require.Contains(t, entry.Output, "imported 300")
		assertUnchanged(t, before, treeState(t, shared), fmt.Sprintf("run %d changed the shared cache", i+1))
		assertUnchanged(t, seedBefore, treeState(t, seed), fmt.Sprintf("run %d changed the seed", i+1))
		r.mu.Lock()
		dir := r.cache
		r.mu.Unlock()
		require.NotEmpty(t, dir)
		require.Eventually(t, func() bool {
			_, err := os.Lstat(dir)
			return os.IsNotExist(err)
		}, 10*time.Second, 10*time.Millisecond, "the run's cache folder is removed after the run")
	}
	scriptStores(t, shared)
}

// A run whose deno writes past Config.DiskLimit in its own cache folder
// fails limit_exceeded, naming its disk, while a run beside it succeeds,
// and the shared cache is untouched.
func TestDiskLimitFailsTheRunAlone(t *testing.T) {
	const limit = 8 << 20
	e := newMgrOwnCache(t, func(c *Config) { c.DiskLimit = limit })
	flood := e.script(t, "flood.ts", strings.Replace(floodScript, "COUNT", "1e9", 1))
	benign := e.script(t, "benign.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\nawait context.result(\"fine\");\n")
	shared := e.m.cfg.CacheDir
	before := treeState(t, shared)

	r, err := e.m.Start(context.Background(), Request{Script: flood})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, ok := e.run(t, Request{Script: benign})
		assert.Equal(t, history.StateSucceeded, ok.State, "a run beside it: %s %s", ok.Reason, ok.Output)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	wg.Wait()
	require.Equal(t, history.StateFailed, entry.State, "%s\n%s", entry.Reason, entry.Output)
	assert.True(t, strings.HasPrefix(entry.Reason, "limit_exceeded: "), entry.Reason)
	assert.Contains(t, entry.Reason, "disk limit of 8 MiB")
	assert.NotContains(t, entry.Output, "imported", "the flood was stopped")
	t.Log(entry.Reason)
	assertUnchanged(t, before, treeState(t, shared), "the shared cache was touched")
	scriptStores(t, shared)
}

// New removes the cache folders a host that died left (their lock is
// free) once they are a minute old, and leaves a locked one (a live run of
// another manager) and a new one (one another manager is making).
func TestNewSweepsCacheFoldersOfADeadHost(t *testing.T) {
	e := newMgr(t, nil)
	runs := filepath.Join(e.data, "runs")
	old := time.Now().Add(-2 * staleRunCache)
	mk := func(name string, age time.Time) string {
		dir := filepath.Join(runs, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "gen", "data"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "gen", "data", "x.js"), []byte("export {}"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, lockName), nil, 0o600))
		require.NoError(t, os.Chtimes(dir, age, age))
		return dir
	}
	dead, deadSeed := mk("run-dead", old), mk("seed-dead", old)
	young := mk("run-young", time.Now())
	held := mk("run-held", old)
	unlock, err := filelock.Lock(context.Background(), filepath.Join(held, lockName))
	require.NoError(t, err)
	defer unlock()
	other := mk("not-a-run", old)

	m2, err := New(e.m.cfg)
	require.NoError(t, err)
	defer m2.Close()
	for _, gone := range []string{dead, deadSeed} {
		_, err := os.Lstat(gone)
		assert.True(t, os.IsNotExist(err), "%s is removed", filepath.Base(gone))
	}
	for _, kept := range []string{young, held, other} {
		assert.DirExists(t, kept)
	}
	for _, d := range runCacheDirs(t, e) {
		assert.NotEqual(t, dead, d)
	}
}

// Prepare removes what runs of older versions, whose DENO_DIR the shared
// cache was, left there: the emits of their data: modules, and a code or
// analysis cache grown past staleCacheBytes. A cache of a normal size, and
// the packages, stay.
func TestTidySharedCache(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, size int64) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size)) // sparse: the size is what counts
		require.NoError(t, f.Close())
		return p
	}
	dataEmit := write("gen/data/0123.js", 10)
	code := []string{write("v8_code_cache_v2", 4096), write("v8_code_cache_v2-wal", staleCacheBytes), write("v8_code_cache_v2-shm", 32768)}
	kept := []string{write("dep_analysis_cache_v2", 4096), write("dep_analysis_cache_v2-wal", 1<<20),
		write("npm/registry.npmjs.org/capnweb/0.12.0/package.json", 100), write("gen/file/sdk/mod.ts.js", 100)}
	tidySharedCache(dir)
	for _, p := range append(code, dataEmit) {
		_, err := os.Lstat(p)
		assert.True(t, os.IsNotExist(err), "%s is removed", p)
	}
	for _, p := range kept {
		assert.FileExists(t, p)
	}
}

// A run that may download (an import= host) downloads into its own cache
// folder: the shared cache's packages are there file by file, so the
// SDK's npm package loads, and what it downloads lands beside them, not
// in the shared cache.
func TestDownloadingRunKeepsItsDownloads(t *testing.T) {
	var served sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Store(r.URL.Path, true)
		w.Header().Set("Content-Type", "application/typescript")
		io.WriteString(w, "export const answer: number = 42;\n")
	}))
	defer srv.Close()
	e := newMgrOwnCache(t, nil)
	host := strings.TrimPrefix(srv.URL, "http://")
	script := e.script(t, "remote.ts", "// @permissions import="+host+"\n"+
		"import { context } from \"tranquil/automation\";\n"+
		"const { answer } = await import(\""+srv.URL+"/mod.ts\");\n"+
		"await context.result(answer);\n")
	shared := e.m.cfg.CacheDir
	before := treeState(t, shared)
	plan, err := e.m.Plan(context.Background(), Request{Script: script})
	require.NoError(t, err)
	require.NoError(t, plan.Refused)
	require.NotContains(t, plan.Args, "--cached-only", "the run may download")
	for range 2 {
		_, entry := e.run(t, Request{Script: script})
		require.Equal(t, history.StateSucceeded, entry.State, "%s\n%s", entry.Reason, entry.Output)
		assert.JSONEq(t, "42", string(entry.Result))
		assertUnchanged(t, before, treeState(t, shared), "the shared cache changed")
	}
	_, ok := served.Load("/mod.ts")
	assert.True(t, ok, "the module was downloaded")
	scriptStores(t, shared)
}

// Where symlinks cannot be made (Windows without the privilege) a run's
// folder holds hard links to the shared packages: the disk watch charges
// the run nothing for them, and everything for a file deno put in the
// place of one, or made itself.
func TestDiskUsageLeavesHardLinksToSharedFilesOut(t *testing.T) {
	shared, run := t.TempDir(), t.TempDir()
	big := bytes.Repeat([]byte("x"), 1<<20)
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "pkg"), 0o700))
	for _, name := range []string{"a.js", "b.js"} {
		require.NoError(t, os.WriteFile(filepath.Join(shared, "pkg", name), big, 0o600))
	}
	linked := linkedFiles{}
	// linkTree tries a symlink first; this test wants the hard links.
	require.NoError(t, eachFile(filepath.Join(run, "npm"), shared, func(to, from string) error {
		require.NoError(t, os.Link(from, to))
		fi, err := os.Stat(to)
		require.NoError(t, err)
		linked[to] = fileStamp{fi.Size(), fi.ModTime()}
		return nil
	}))
	folders := int64(2 * diskBlock) // npm and npm/pkg
	assert.Equal(t, folders, diskUsage(run, 64<<20, linked)-diskBlock, "the links cost nothing")
	assert.Greater(t, diskUsage(run, 64<<20, nil), int64(2<<20), "unrecorded, they would count")

	// deno replaces a file by renaming a new one into place.
	b := filepath.Join(run, "npm", "pkg", "b.js")
	require.NoError(t, os.WriteFile(b+".tmp", append(big, 'y'), 0o600))
	require.NoError(t, os.Rename(b+".tmp", b))
	require.NoError(t, os.WriteFile(filepath.Join(run, "own.bin"), big, 0o600))
	assert.Equal(t, folders+2*(1<<20)+diskBlock, diskUsage(run, 64<<20, linked)-diskBlock,
		"the replaced file and the run's own one count")
}
