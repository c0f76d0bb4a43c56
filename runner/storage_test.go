package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/permissions"
)

// originDirs returns where deno keeps the script's localStorage and Cache
// API, and removes both from the shared test cache when the test ends.
func originDirs(t *testing.T, script string) (local, webCache string) {
	t.Helper()
	h, err := permissions.Parse([]byte("// @permissions none\n"), script)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(strings.TrimSuffix(permissions.Location(h), "/")))
	key := hex.EncodeToString(sum[:])
	root := filepath.Join(testenv.DenoCacheDir(t), "location_data")
	local, webCache = filepath.Join(root, key), filepath.Join(root, "web_cache", key)
	t.Cleanup(func() {
		os.RemoveAll(local)
		os.RemoveAll(webCache)
	})
	return local, webCache
}

// Two scripts of the same folder, run by the same manager with the same
// bootstrap and --config, have a localStorage each: neither sees the
// other's, and each keeps its own across runs.
func TestScriptsDoNotShareLocalStorage(t *testing.T) {
	t.Parallel() // see parallel_test.go
	// Linked, and copied and copied back (where symlinks cannot be made,
	// as on Windows without the privilege).
	for _, copied := range []bool{false, true} {
		t.Run(map[bool]string{false: "linked", true: "copied"}[copied], func(t *testing.T) {
			e := newMgr(t, nil)
			e.m.caches.copyStores = copied
			src := func(name string) string {
				return `// @permissions none
console.log("` + name + ` saw " + localStorage.getItem("secret") + " and " + localStorage.getItem("runs") + " runs at " + location.origin);
localStorage.setItem("secret", "` + name + `'s secret");
localStorage.setItem("runs", String(Number(localStorage.getItem("runs") ?? 0) + 1));
localStorage.setItem("key " + localStorage.getItem("runs"), "x".repeat(50000));
`
			}
			a, b := e.script(t, "a.ts", src("a")), e.script(t, "b.ts", src("b"))
			originDirs(t, a)
			originDirs(t, b)

			_, first := e.run(t, Request{Script: a})
			require.Equal(t, history.StateSucceeded, first.State, first.Output)
			assert.Contains(t, first.Output, "a saw null and null runs")

			_, other := e.run(t, Request{Script: b})
			require.Equal(t, history.StateSucceeded, other.State, other.Output)
			assert.Contains(t, other.Output, "b saw null", "b must not read a's localStorage")
			assert.NotContains(t, other.Output, "a's secret")

			for i := 1; i <= 2; i++ {
				_, again := e.run(t, Request{Script: a})
				require.Equal(t, history.StateSucceeded, again.State, again.Output)
				assert.Contains(t, again.Output, fmt.Sprintf("a saw a's secret and %d runs", i), "a keeps its own store, new keys too")
				assert.NotContains(t, again.Output, "b's secret")
			}
		})
	}
}

// The Cache API, which deno does not bound, is off: not in the script's
// global scope and refused in a worker the script starts from a blob,
// which gets a fresh global scope (the run's own cache holds the file
// that blocks it). Nothing is written under the shared cache, and a cache
// an older version left there is removed.
func TestCacheAPIIsOff(t *testing.T) {
	e := newMgr(t, nil)
	script := e.script(t, "cache.ts", `// @permissions none
console.log("typeof caches: " + typeof caches);
const src = "try { const c = await caches.open('x'); await c.put('http://x.invalid/a', new Response(new Uint8Array(8 << 20))); postMessage('stored'); } catch (e) { postMessage('refused: ' + e.message); }";
const w = new Worker(URL.createObjectURL(new Blob([src], { type: "application/javascript" })), { type: "module" });
const msg = await new Promise((resolve) => { w.onmessage = (ev) => resolve(ev.data); });
w.terminate();
console.log("worker: " + msg);
`)
	_, webCache := originDirs(t, script)
	require.NoError(t, os.MkdirAll(filepath.Join(webCache, "1", "responses"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(webCache, "1", "responses", "old"), []byte("left by an older version"), 0o600))

	_, entry := e.run(t, Request{Script: script})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	assert.Contains(t, entry.Output, "typeof caches: undefined")
	assert.Contains(t, entry.Output, "worker: refused: ")
	assert.NotContains(t, entry.Output, "stored")
	_, err := os.Lstat(webCache)
	assert.ErrorIs(t, err, fs.ErrNotExist, "the cache an older version left in the shared cache is gone, and none is made there")
}
