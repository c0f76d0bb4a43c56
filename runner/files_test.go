package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Every spelling of a write= grant for a folder that does not exist yet
// lets files.write make it, and the folders below it: relative, "./",
// with a trailing slash, absolute.
func TestFilesWriteMakesAGrantedFolderThatIsNotThereYet(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newMgr(t, nil)
	for i, c := range []struct{ grant, write, made string }{
		{"out", "out/report.txt", "out/report.txt"},
		{"./out", "out/report.txt", "out/report.txt"},
		{"out/", "out/report.txt", "out/report.txt"},
		{"./out/", "./out/report.txt", "out/report.txt"},
		{"@abs/out", "out/report.txt", "out/report.txt"},
		{"@abs/out/", "@abs/out/report.txt", "out/report.txt"},
		{"out/", "out/a/b/report.txt", "out/a/b/report.txt"},
		{"out/reports", "out/reports/2024/q1.txt", "out/reports/2024/q1.txt"},
	} {
		dir := filepath.Join(e.dir, fmt.Sprint("s", i))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		grant := strings.Replace(c.grant, "@abs", dir, 1)
		write := strings.Replace(c.write, "@abs", dir, 1)
		if c.grant == "out/reports" {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "out"), 0o755)) // the grant's parent is there; the grant is not
		}
		src := fmt.Sprintf("// @permissions write=%s\nimport { context, files } from \"tranquil/automation\";\nawait context.result(files.write(%q, \"hi\"));\n", grant, write)
		_, entry := e.run(t, Request{Script: e.script(t, filepath.Join(fmt.Sprint("s", i), "w.ts"), src)})
		if !assert.Equal(t, history.StateSucceeded, entry.State, "write=%s, files.write(%q): %s %s", grant, write, entry.Reason, entry.Output) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.made)))
		if assert.NoError(t, err, "write=%s", grant) {
			assert.Equal(t, "hi", string(b))
		}
		var got string
		require.NoError(t, json.Unmarshal(entry.Result, &got))
		assert.Equal(t, filepath.Join(dir, filepath.FromSlash(c.made)), got, "files.write returns the absolute path")
	}

	// A grant whose own parent is missing cannot be made: that parent is
	// outside the grants, and the error says so.
	entry := e.runScript(t, "s-missing/w.ts", `// @permissions write=missing/out/
import { files } from "tranquil/automation";
files.write("missing/out/report.txt", "hi");
`)
	require.Equal(t, history.StateFailed, entry.State)
	assert.Contains(t, entry.Output, "NotCapable")
	assert.Contains(t, entry.Output, "is missing and outside the script's write= grants")
	_, err := os.Stat(filepath.Join(e.dir, "s-missing", "missing"))
	assert.True(t, os.IsNotExist(err))
}
