package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/winetest"
)

// files.write into a write= grant makes the folders missing below it, and
// still refuses anything outside the grants: a folder above the grant, a
// file beside it, a link in the grant that leads out of it.
func TestFilesWriteMakesFoldersInsideItsGrant(t *testing.T) {
	winetest.RequireSymlinks(t)
	e := newMgr(t, nil)
	outside := filepath.Join(filepath.Dir(e.dir), "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "out"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(e.dir, "out", "away")))
	entry := e.runScript(t, "files.ts", `// @permissions write=out write=fresh/inner read=out
import { context, files } from "tranquil/automation";
const seen: Record<string, string> = {};
for (const name of ["out/a/b/c.txt", "fresh/inner/d/e.txt", "fresh/beside.txt", "elsewhere/x.txt", "out/away/new/f.txt"]) {
  try {
    files.write(name, "hi");
    seen[name] = "written";
  } catch (e) {
    seen[name] = (e as Error).name;
  }
}
await context.result(seen);
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	var seen map[string]string
	require.NoError(t, json.Unmarshal(entry.Result, &seen))
	assert.Equal(t, map[string]string{
		"out/a/b/c.txt":       "written",
		"fresh/inner/d/e.txt": "NotCapable", // fresh, above the grant, is not made
		"fresh/beside.txt":    "NotCapable",
		"elsewhere/x.txt":     "NotCapable",
		"out/away/new/f.txt":  "NotCapable", // the link leads out of the grant
	}, seen)
	b, err := os.ReadFile(filepath.Join(e.dir, "out", "a", "b", "c.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi", string(b))
	for _, p := range []string{filepath.Join(e.dir, "elsewhere"), filepath.Join(e.dir, "fresh"), filepath.Join(outside, "new")} {
		_, err := os.Stat(p)
		assert.True(t, os.IsNotExist(err), "%s is not made", p)
	}
}
