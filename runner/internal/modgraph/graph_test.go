package modgraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/permissions"
)

// launcher gives each deno the checks start a module cache of its own, as
// the runner's scratch caches do, and counts them.
type launcher struct{ started atomic.Int32 }

func (l *launcher) DownloadEnv() []string { return nil }

func (l *launcher) ScratchEnv() ([]string, func(), error) {
	l.started.Add(1)
	dir, err := os.MkdirTemp("", "modgraph-cache-")
	if err != nil {
		return nil, nil, err
	}
	return []string{"DENO_DIR=" + dir, "DENO_NO_UPDATE_CHECK=1", "DENO_NO_PROMPT=1", "NO_COLOR=1"}, func() { os.RemoveAll(dir) }, nil
}

func (l *launcher) StartErr(err error) error {
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// graphDir is a folder for scripts (symlinks resolved, as the runner
// resolves a script's path), a checker and an SDK of only a deno.json
// with an empty import map.
func graphDir(tb testing.TB) (string, *Checker, *launcher, SDK) {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	require.NoError(tb, err)
	sdk := SDK{Dir: filepath.Join(root, ".sdk")}
	sdk.Config, sdk.Bootstrap = filepath.Join(sdk.Dir, "deno.json"), filepath.Join(sdk.Dir, "main.ts")
	require.NoError(tb, os.MkdirAll(sdk.Dir, 0o700))
	require.NoError(tb, os.WriteFile(sdk.Config, []byte(`{"imports": {}}`), 0o600))
	l := &launcher{}
	return root, &Checker{Deno: testenv.Deno(tb), Launcher: l, DataDir: filepath.Join(root, ".data")}, l, sdk
}

// write writes a file under root and returns its path.
func write(tb testing.TB, root, name, src string) string {
	tb.Helper()
	p := filepath.Join(root, name)
	require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(tb, os.WriteFile(p, []byte(src), 0o644))
	return p
}

// check parses the script at entry's header and checks its graph.
func check(tb testing.TB, c *Checker, sdk SDK, entry string) error {
	tb.Helper()
	src, err := os.ReadFile(entry)
	require.NoError(tb, err)
	h, err := permissions.Parse(src, entry)
	require.NoError(tb, err)
	return c.Check(context.Background(), sdk, h, entry)
}

// A local import outside the script's read= grants is refused, naming
// the file and the grant that would allow it; inside one it passes.
func TestCheckRefusesAnUndeclaredImport(t *testing.T) {
	root, c, _, sdk := graphDir(t)
	lib := write(t, root, "lib/a.ts", "export const a = 1;\n")
	entry := write(t, root, "main.ts", "// @permissions none\nimport { a } from \"./lib/a.ts\";\nconsole.log(a);\n")
	err := check(t, c, sdk, entry)
	require.ErrorIs(t, err, ErrUndeclaredImport)
	assert.Contains(t, err.Error(), lib+"; add read="+lib)

	entry = write(t, root, "ok.ts", "// @permissions read=lib\nimport { a } from \"./lib/a.ts\";\nconsole.log(a);\n")
	require.NoError(t, check(t, c, sdk, entry))
}

// A passed check is remembered (no deno runs for it again) until a file
// of the graph changes, even when its size and modification time are
// kept: the swapped module text-imports an undeclared file, and the next
// check refuses it.
func TestCheckRemembersAGraphUntilAFileChanges(t *testing.T) {
	root, c, l, sdk := graphDir(t)
	write(t, root, "secret.txt", "the secret is 42")
	const evil = `import s from "../secret.txt" with { type: "text" }; export const x = s;`
	benign := "export const x = 1;"
	benign += "//" + strings.Repeat(" ", len(evil)-len(benign)-2)
	mod := write(t, root, "lib/mod.ts", benign)
	round := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(mod, round, round))
	entry := write(t, root, "victim.ts", "// @permissions read=lib\nimport { x } from \"./lib/mod.ts\";\nconsole.log(x);\n")

	require.NoError(t, check(t, c, sdk, entry))
	require.NoError(t, check(t, c, sdk, entry))
	assert.EqualValues(t, 1, l.started.Load(), "the second check was the cache's")

	require.NoError(t, os.WriteFile(mod, []byte(evil), 0o644))
	require.NoError(t, os.Chtimes(mod, round, round))
	err := check(t, c, sdk, entry)
	require.ErrorIs(t, err, ErrUndeclaredImport)
	assert.Contains(t, err.Error(), filepath.Join(root, "secret.txt"))
	assert.EqualValues(t, 2, l.started.Load())
}

// Remote code is refused when the run may import none, naming the import
// as written and where; deno info, which reads the graph, downloads
// nothing (--no-remote).
func TestCheckRefusesRemoteCodeWithoutImports(t *testing.T) {
	root, c, _, sdk := graphDir(t)
	entry := write(t, root, "main.ts", "// @permissions none\nconst x = 1;\nimport \"http://127.0.0.1:9/x.ts\";\nconsole.log(x);\n")
	err := check(t, c, sdk, entry)
	require.ErrorIs(t, err, ErrRemoteImport)
	assert.Contains(t, err.Error(), "line 3 of main.ts")
}

// Without a seed lock CacheStd refuses before it downloads anything.
func TestCacheStdNeedsASeed(t *testing.T) {
	_, c, _, sdk := graphDir(t)
	c.Registry = Registry{URL: "http://127.0.0.1:9/", Host: "127.0.0.1:9"}
	require.ErrorIs(t, c.CacheStd(context.Background(), sdk), ErrRegistry)
}

func TestJSRConfigIsChecked(t *testing.T) {
	for _, bad := range []string{"jsr.io", "ftp://jsr.io/", "https://user@jsr.io/", "https:///", "https://jsr.io/?q=1"} {
		_, err := ParseRegistry(bad)
		assert.Error(t, err, bad)
	}
	r, err := ParseRegistry("https://jsr.io")
	require.NoError(t, err)
	assert.Equal(t, Registry{URL: "https://jsr.io/", Host: "jsr.io"}, r)
}

// TestFileURLOfThisSystemsPaths: deno info gets the entry as a file: URL,
// which names the same file as the path, and FilePath reads it back.
func TestFileURLOfThisSystemsPaths(t *testing.T) {
	cases := map[string]string{"/home/me/My Scripts/a#1.ts": "file:///home/me/My%20Scripts/a%231.ts"}
	if runtime.GOOS == "windows" {
		cases = map[string]string{
			`C:\Users\me\My Scripts\a#1.ts`: "file:///C:/Users/me/My%20Scripts/a%231.ts",
			`\\server\share\s.ts`:           "file://server/share/s.ts",
		}
	}
	for p, want := range cases {
		assert.Equal(t, want, FileURL(p))
		back, err := FilePath(want)
		require.NoError(t, err)
		assert.Equal(t, p, back)
	}
}

// BenchmarkGraphCheck measures a cached check of a 50-module graph (the
// verdict is reused once every file's content hash matches) against a stat
// of the same files, and the uncached check, which runs deno info.
func BenchmarkGraphCheck(b *testing.B) {
	root, c, _, sdk := graphDir(b)
	var imports strings.Builder
	for i := range 49 {
		body := fmt.Sprintf("export const v%d = %d;\n", i, i) + strings.Repeat("// filler line for a module of about a kilobyte\n", 20)
		write(b, root, fmt.Sprintf("lib/m%d.ts", i), body)
		fmt.Fprintf(&imports, "import { v%d } from \"./lib/m%d.ts\";\n", i, i)
	}
	src := "// @permissions read=lib\n" + imports.String()
	entry := write(b, root, "main.ts", src)
	h, err := permissions.Parse([]byte(src), entry)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	files, _, err := c.moduleFiles(ctx, sdk, entry)
	if err != nil || len(files) != 50 {
		b.Fatalf("graph of %d files, want 50: %v", len(files), err)
	}
	// The peer is what the cache used to trust: a stat of every file,
	// interleaved with the check so both see the same machine.
	b.Run("cached", func(b *testing.B) {
		if err := c.Check(ctx, sdk, h, entry); err != nil {
			b.Fatal(err)
		}
		var checkT, statT time.Duration
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if err := c.Check(ctx, sdk, h, entry); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			for _, f := range files {
				if _, err := os.Stat(f); err != nil {
					b.Fatal(err)
				}
			}
			checkT, statT = checkT+t1.Sub(t0), statT+time.Since(t1)
		}
		b.ReportMetric(float64(checkT.Nanoseconds())/float64(b.N), "check-ns")
		b.ReportMetric(float64(statT.Nanoseconds())/float64(b.N), "stat-peer-ns")
		b.ReportMetric(float64(checkT)/float64(statT), "ratio")
	})
	b.Run("uncached", func(b *testing.B) {
		for range b.N {
			c.mu.Lock()
			clear(c.entries)
			c.mu.Unlock()
			if err := c.Check(ctx, sdk, h, entry); err != nil {
				b.Fatal(err)
			}
		}
	})
}
