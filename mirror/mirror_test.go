package mirror

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/internal/winetest"
)

// fixture is a script with a write= directory, a store and a destination,
// all real files under one temporary directory.
type fixture struct {
	root, dir, script, out, dest string
	store                        *Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	testenv.CheckGoroutines(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := &fixture{root: root, dir: filepath.Join(root, "scripts"), dest: filepath.Join(root, "reports")}
	f.script = filepath.Join(f.dir, "report.ts")
	f.out = filepath.Join(f.dir, "out")
	require.NoError(t, os.MkdirAll(f.out, 0o755))
	require.NoError(t, os.WriteFile(f.script, []byte("// @permissions write=out\nconsole.log(1);\n"), 0o644))
	f.store, err = OpenStore(filepath.Join(root, "data", FileName), Options{})
	require.NoError(t, err)
	return f
}

func (f *fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.out, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func (f *fixture) set(t *testing.T) {
	t.Helper()
	_, err := f.store.Set(context.Background(), ScopeScript, f.script, f.dest)
	require.NoError(t, err)
}

func (f *fixture) sync(t *testing.T) (Result, error) {
	t.Helper()
	return f.store.Sync(context.Background(), Source{Script: f.script, ScriptDir: f.dir, WriteRoots: []string{f.out}, Trigger: "sync"})
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestSyncCopiesOnlyWhatChangedAndNeverDeletes(t *testing.T) {
	f := newFixture(t)
	f.set(t)
	f.write(t, "a.txt", "alpha")
	f.write(t, "sub/b.txt", "beta")

	res, err := f.sync(t)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{filepath.FromSlash("out/a.txt"), filepath.FromSlash("out/sub/b.txt")}, res.Copied)
	assert.Equal(t, "alpha", readFile(t, filepath.Join(f.dest, "out", "a.txt")))
	assert.Equal(t, "beta", readFile(t, filepath.Join(f.dest, "out", "sub", "b.txt")))
	before, err := os.Stat(filepath.Join(f.dest, "out", "sub", "b.txt"))
	require.NoError(t, err)

	// Change one file: only it is rewritten; the other keeps its inode.
	f.write(t, "a.txt", "alpha, second edition")
	res, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.FromSlash("out/a.txt")}, res.Copied)
	assert.Equal(t, 1, res.Unchanged)
	assert.Equal(t, "alpha, second edition", readFile(t, filepath.Join(f.dest, "out", "a.txt")))
	after, err := os.Stat(filepath.Join(f.dest, "out", "sub", "b.txt"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "an unchanged file was rewritten")

	// Delete at the source: the destination keeps it.
	require.NoError(t, os.Remove(filepath.Join(f.out, "sub", "b.txt")))
	res, err = f.sync(t)
	require.NoError(t, err)
	assert.Empty(t, res.Copied)
	assert.Equal(t, "beta", readFile(t, filepath.Join(f.dest, "out", "sub", "b.txt")))

	// No temporary file is left in the destination.
	require.NoError(t, filepath.WalkDir(f.dest, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		assert.NotContains(t, d.Name(), tempMarker)
		return nil
	}))
}

func TestSourceLinkOutsideIsSkippedAndReported(t *testing.T) {
	winetest.RequireSymlinks(t)
	f := newFixture(t)
	f.set(t)
	secret := filepath.Join(f.root, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("private"), 0o600))
	f.write(t, "ok.txt", "fine")
	require.NoError(t, os.Symlink(secret, filepath.Join(f.out, "leak.txt")))
	require.NoError(t, os.Symlink("ok.txt", filepath.Join(f.out, "alias.txt"))) // stays inside: copied
	require.NoError(t, os.Symlink(f.root, filepath.Join(f.out, "updir")))       // a directory outside

	res, err := f.sync(t)
	require.NoError(t, err, "skips are not errors")
	assert.ElementsMatch(t, []string{filepath.FromSlash("out/ok.txt"), filepath.FromSlash("out/alias.txt")}, res.Copied)
	assert.ElementsMatch(t, []Skip{
		{Path: filepath.Join(f.out, "leak.txt"), Reason: SkipSourceLink},
		{Path: filepath.Join(f.out, "updir"), Reason: SkipSourceLink},
	}, res.Skipped)
	assert.NoFileExists(t, filepath.Join(f.dest, "out", "leak.txt"))
	assert.Equal(t, "fine", readFile(t, filepath.Join(f.dest, "out", "alias.txt")))

	m, ok, err := f.store.Status(context.Background(), f.script)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 2, m.State.SkippedTotal)
	assert.Len(t, m.State.Skipped, 2)
	assert.Equal(t, OutcomeCopied, m.State.Outcome())
}

func TestDestinationLinkOutsideIsSkippedAndReported(t *testing.T) {
	winetest.RequireSymlinks(t)
	f := newFixture(t)
	f.set(t)
	elsewhere := filepath.Join(f.root, "elsewhere")
	require.NoError(t, os.MkdirAll(elsewhere, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(f.dest, "out"), 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(f.dest, "out", "sub")))
	f.write(t, "sub/x.txt", "x")
	f.write(t, "y.txt", "y")

	res, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.FromSlash("out/y.txt")}, res.Copied)
	assert.Equal(t, []Skip{{Path: filepath.Join(f.out, "sub", "x.txt"), Reason: SkipDestLink}}, res.Skipped)
	assert.NoFileExists(t, filepath.Join(elsewhere, "x.txt"))
	// The link itself is left alone: a mirror never unlinks.
	fi, err := os.Lstat(filepath.Join(f.dest, "out", "sub"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink)
}

func TestGuardRefusesOverlappingDestinations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	linkToScripts := filepath.Join(f.root, "shortcut")
	require.NoError(t, os.Symlink(f.dir, linkToScripts))
	cases := map[string]struct {
		dest   string
		inside bool
	}{
		"inside the script dir":            {filepath.Join(f.dir, "mirror"), true},
		"the script dir itself":            {f.dir, true},
		"containing the script dir":        {f.root, false},
		"inside a write root":              {filepath.Join(f.out, "copy"), true},
		"through a link into the scripts":  {filepath.Join(linkToScripts, "mirror"), true},
		"through a link, lexically benign": {filepath.Join(linkToScripts, "..", "shortcut", "m"), true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(name, "link") {
				winetest.RequireSymlinks(t)
			}
			_, err := f.store.Set(ctx, ScopeScript, f.script, c.dest)
			require.ErrorIs(t, err, ErrRefused)
			var re *RefusedError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, c.inside, re.Inside, re.Error())
		})
	}
	all, err := f.store.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "a refused destination is not stored")

	// A write root outside the script dir is protected too.
	shared := filepath.Join(f.root, "shared")
	require.NoError(t, os.WriteFile(f.script, []byte("// @permissions write=../shared\n"), 0o644))
	_, err = f.store.Set(ctx, ScopeScript, f.script, filepath.Join(shared, "m"))
	require.ErrorIs(t, err, ErrRefused)

	// A workspace mirror may not hold the workspace.
	_, err = f.store.Set(ctx, ScopeWorkspace, f.root, filepath.Join(f.root, "w"))
	require.ErrorIs(t, err, ErrRefused)
}

func TestGuardChecksAgainAtSync(t *testing.T) {
	f := newFixture(t)
	f.set(t)
	f.write(t, "a.txt", "a")
	// The header changed since Set: the run now writes into the destination.
	res, err := f.store.Sync(context.Background(), Source{Script: f.script, ScriptDir: f.dir, WriteRoots: []string{f.out, f.dest}, Trigger: "sync"})
	require.ErrorIs(t, err, ErrRefused)
	assert.Empty(t, res.Copied)
	assert.NoDirExists(t, f.dest)
	assert.Equal(t, OutcomeFailed, res.Mirror.State.Outcome())
	assert.Contains(t, res.Mirror.State.LastError, "destination refused")
}

func TestOutcomesAreDistinct(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.set(t)
	m, ok, err := f.store.Status(ctx, f.script)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, OutcomeNever, m.State.Outcome())
	assert.True(t, m.State.LastSync.IsZero())

	_, err = f.sync(t)
	require.NoError(t, err)
	m, _, err = f.store.Status(ctx, f.script)
	require.NoError(t, err)
	assert.Equal(t, OutcomeNothing, m.State.Outcome())
	assert.False(t, m.State.LastSync.IsZero())
	assert.Zero(t, m.State.Copied)

	f.write(t, "one.txt", "1")
	f.write(t, "two.txt", "2")
	f.write(t, "three.txt", "3")
	_, err = f.sync(t)
	require.NoError(t, err)
	m, _, err = f.store.Status(ctx, f.script)
	require.NoError(t, err)
	assert.Equal(t, OutcomeCopied, m.State.Outcome())
	assert.Equal(t, 3, m.State.Copied)
	assert.Equal(t, "sync", m.State.Trigger)
}

func TestFailedCopySetsLastError(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.dest = filepath.Join(f.root, "blocked", "reports")
	f.set(t)
	// The destination's parent becomes a regular file: nothing can be
	// created under it, whoever runs the test.
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "blocked"), []byte("in the way"), 0o644))
	f.write(t, "a.txt", "a")
	_, err := f.sync(t)
	require.Error(t, err)
	m, _, serr := f.store.Status(ctx, f.script)
	require.NoError(t, serr)
	assert.Equal(t, OutcomeFailed, m.State.Outcome())
	assert.Equal(t, err.Error(), m.State.LastError)

	// Once the way is clear, the next sync succeeds and clears the error.
	require.NoError(t, os.Remove(filepath.Join(f.root, "blocked")))
	_, err = f.sync(t)
	require.NoError(t, err)
	m, _, err = f.store.Status(ctx, f.script)
	require.NoError(t, err)
	assert.Equal(t, OutcomeCopied, m.State.Outcome())
	assert.Empty(t, m.State.LastError)
}

func TestWorkspaceScope(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ws := f.dir
	other := filepath.Join(f.root, "elsewhere.ts")
	require.NoError(t, os.WriteFile(other, []byte("// @permissions none\n"), 0o644))
	wdest := filepath.Join(f.root, "ws-mirror")
	_, err := f.store.Set(ctx, ScopeWorkspace, ws, wdest)
	require.NoError(t, err)

	m, ok, err := f.store.Status(ctx, f.script)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, ScopeWorkspace, m.Scope)
	_, ok, err = f.store.Status(ctx, other)
	require.NoError(t, err)
	assert.False(t, ok, "a script outside the workspace has no mirror")

	f.write(t, "w.txt", "w")
	_, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, "w", readFile(t, filepath.Join(wdest, "out", "w.txt")))

	// The script's own mirror wins over the workspace's.
	f.set(t)
	m, _, err = f.store.Status(ctx, f.script)
	require.NoError(t, err)
	assert.Equal(t, ScopeScript, m.Scope)
	assert.Equal(t, f.dest, m.Dest)
}

func TestSetListRemove(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.set(t)
	f.write(t, "a.txt", "a")
	_, err := f.sync(t)
	require.NoError(t, err)

	// Setting the same destination again keeps the state; another one
	// starts over.
	f.set(t)
	m, _, err := f.store.Get(ctx, ScopeScript, f.script)
	require.NoError(t, err)
	assert.Equal(t, OutcomeCopied, m.State.Outcome())
	_, err = f.store.Set(ctx, ScopeScript, f.script, filepath.Join(f.root, "other"))
	require.NoError(t, err)
	m, _, err = f.store.Get(ctx, ScopeScript, f.script)
	require.NoError(t, err)
	assert.Equal(t, OutcomeNever, m.State.Outcome())

	list, err := f.store.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, f.script, list[0].Key)

	found, err := f.store.Remove(ctx, ScopeScript, f.script)
	require.NoError(t, err)
	assert.True(t, found)
	found, err = f.store.Remove(ctx, ScopeScript, f.script)
	require.NoError(t, err)
	assert.False(t, found)
	_, err = f.sync(t)
	require.ErrorIs(t, err, ErrNoMirror)
	// Removing the declaration leaves the copied files.
	assert.FileExists(t, filepath.Join(f.dest, "out", "a.txt"))

	// A sync that ends after its mirror was removed does not bring it back.
	require.NoError(t, f.store.record(ctx, Mirror{Scope: ScopeScript, Key: f.script, Dest: f.dest}, State{LastSync: time.Now(), Copied: 1}))
	list, err = f.store.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestBadDeclarations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.store.Set(ctx, ScopeScript, f.script, "relative/dir")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = f.store.Set(ctx, "project", f.script, f.dest)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = f.store.Set(ctx, ScopeScript, "report.ts", f.dest)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = OpenStore("mirrors.json", Options{})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestCorruptStoreIsMovedAside(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.set(t)
	require.NoError(t, os.WriteFile(f.store.Path(), []byte(`{"version":1,"scripts":{"relative":{}}}`), 0o600))
	list, err := f.store.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list, "nothing from a corrupt file is trusted")
	aside, err := filepath.Glob(f.store.Path() + ".corrupt-*")
	require.NoError(t, err)
	require.Len(t, aside, 1)
	assert.Contains(t, readFile(t, aside[0]), "relative", "the corrupt file is kept")
	_, err = f.sync(t)
	require.ErrorIs(t, err, ErrNoMirror, "no mirror runs until declared again")
	f.set(t)
	_, ok, err := f.store.Status(ctx, f.script)
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestCancelledSyncIsRecorded(t *testing.T) {
	f := newFixture(t)
	f.set(t)
	f.write(t, "a.txt", "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := f.store.Sync(ctx, Source{Script: f.script, ScriptDir: f.dir, WriteRoots: []string{f.out}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, res.Copied)
	m, _, err := f.store.Status(context.Background(), f.script)
	require.NoError(t, err)
	assert.Equal(t, OutcomeFailed, m.State.Outcome())
}

// TestNoWatcher: a mirror syncs only when asked. Declaring one and syncing
// start no goroutine, and the package has no file-watching code.
func TestNoWatcher(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "a")
	before := runtime.NumGoroutine()
	f.set(t)
	_, err := f.sync(t)
	require.NoError(t, err)
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "Set or Sync left a goroutine running")
	assert.Empty(t, goroutinesIn("github.com/tranquil/automation/mirror."), "a goroutine runs mirror code")

	// Writing to the source after the sync is not noticed until the next one.
	f.write(t, "b.txt", "b")
	time.Sleep(100 * time.Millisecond)
	assert.NoFileExists(t, filepath.Join(f.dest, "out", "b.txt"))

	srcs, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, p := range srcs {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		text := readFile(t, p)
		for _, banned := range []string{"fsnotify", "inotify", "kqueue", "ReadDirectoryChanges", "FSEvents", "go func"} {
			assert.NotContains(t, text, banned, p)
		}
	}
}

func TestRefusedErrorWording(t *testing.T) {
	err := error(&RefusedError{Dest: "/a/link/m", Real: "/a/s/m", Protected: "/a/s", Inside: true})
	assert.Equal(t, "mirror: destination refused: /a/link/m is inside /a/s (it resolves to /a/s/m); copying there would feed the mirror its own output", err.Error())
	assert.True(t, errors.Is(err, ErrRefused))
}

// goroutinesIn returns the stacks of goroutines, other than the caller's,
// with a frame in the given package prefix.
func goroutinesIn(pkg string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && strings.Contains(g, pkg) {
			out = append(out, g)
		}
	}
	return out
}

func TestOneFailedCopyDoesNotStopTheOthers(t *testing.T) {
	f := newFixture(t)
	f.set(t)
	f.write(t, "a.txt", "a")
	f.write(t, "b.txt", "b")
	// A directory sits where a.txt should go: that one copy fails.
	require.NoError(t, os.MkdirAll(filepath.Join(f.dest, "out", "a.txt", "kept"), 0o755))
	res, err := f.sync(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.FromSlash("out/a.txt"))
	assert.Equal(t, []string{filepath.FromSlash("out/b.txt")}, res.Copied)
	assert.DirExists(t, filepath.Join(f.dest, "out", "a.txt", "kept"), "nothing in the destination is removed")
	entries, rerr := os.ReadDir(filepath.Join(f.dest, "out"))
	require.NoError(t, rerr)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), tempMarker, "a failed copy leaves no temporary file")
	}
	m, _, serr := f.store.Status(context.Background(), f.script)
	require.NoError(t, serr)
	assert.Equal(t, OutcomeFailed, m.State.Outcome())
	assert.Equal(t, 1, m.State.Copied)
}

func TestWriteRootSwappedForALinkIsSkipped(t *testing.T) {
	winetest.RequireSymlinks(t)
	f := newFixture(t)
	f.set(t)
	private := filepath.Join(f.root, "private")
	require.NoError(t, os.MkdirAll(private, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(private, "key"), []byte("secret"), 0o600))
	require.NoError(t, os.Remove(f.out))
	require.NoError(t, os.Symlink(private, f.out))
	res, err := f.sync(t)
	require.NoError(t, err)
	assert.Empty(t, res.Copied)
	assert.Equal(t, []Skip{{Path: f.out, Reason: SkipSourceLink}}, res.Skipped)
	assert.NoFileExists(t, filepath.Join(f.dest, "out", "key"))
}
