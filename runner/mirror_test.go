package runner

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/winetest"
	"github.com/tranquil/automation/mirror"
)

// mirrorEnv is a manager with mirrors on, stored beside its consent file.
type mirrorEnv struct {
	*mgrEnv
	store *mirror.Store
	dest  string
}

func newMirrorMgr(t *testing.T) *mirrorEnv {
	t.Helper()
	me := &mirrorEnv{}
	me.mgrEnv = newMgr(t, func(c *Config) {
		s, err := mirror.OpenBeside(c.Gate.Store(), mirror.Options{})
		require.NoError(t, err)
		c.Mirrors, me.store = s, s
	})
	me.dest = filepath.Join(filepath.Dir(me.dir), "Documents", "reports")
	return me
}

func (me *mirrorEnv) set(t *testing.T, script, dest string) {
	t.Helper()
	_, err := me.store.Set(context.Background(), mirror.ScopeScript, script, dest)
	require.NoError(t, err)
}

func (me *mirrorEnv) status(t *testing.T, script string) mirror.State {
	t.Helper()
	m, ok, err := me.store.Status(context.Background(), script)
	require.NoError(t, err)
	require.True(t, ok)
	return m.State
}

// succeed runs the script at p (rewritten with src) and requires success.
func (me *mirrorEnv) succeed(t *testing.T, name, src string) history.Entry {
	t.Helper()
	entry := me.runScript(t, name, src)
	require.Equal(t, history.StateSucceeded, entry.State, "reason %q output:\n%s", entry.Reason, entry.Output)
	return entry
}

func TestMirrorAfterRuns(t *testing.T) {
	me := newMirrorMgr(t)
	script := me.script(t, "report.ts", "// @permissions write=out\n")
	me.set(t, script, me.dest)
	destA := filepath.Join(me.dest, "out", "a.txt")
	destB := filepath.Join(me.dest, "out", "b.txt")

	t.Run("a run writes two files and both appear", func(t *testing.T) {
		entry := me.succeed(t, "report.ts", `// @permissions write=out
await Deno.mkdir("out", { recursive: true });
await Deno.writeTextFile("out/a.txt", "alpha 1");
await Deno.writeTextFile("out/b.txt", "beta 1");
`)
		assert.Equal(t, "alpha 1", readText(t, destA))
		assert.Equal(t, "beta 1", readText(t, destB))
		st := me.status(t, script)
		assert.Equal(t, mirror.OutcomeCopied, st.Outcome())
		assert.Equal(t, 2, st.Copied)
		assert.Equal(t, "run "+entry.ID, st.Trigger)
	})

	t.Run("a second run changes one and only that file is rewritten", func(t *testing.T) {
		before, err := os.Stat(destB)
		require.NoError(t, err)
		me.succeed(t, "report.ts", `// @permissions write=out
await Deno.writeTextFile("out/a.txt", "alpha 2, longer");
`)
		assert.Equal(t, "alpha 2, longer", readText(t, destA))
		after, err := os.Stat(destB)
		require.NoError(t, err)
		assert.True(t, os.SameFile(before, after), "the unchanged file was rewritten")
		st := me.status(t, script)
		assert.Equal(t, 1, st.Copied)
		assert.Equal(t, 1, st.Unchanged)
	})

	t.Run("the script deletes a file and the destination keeps it", func(t *testing.T) {
		me.succeed(t, "report.ts", `// @permissions write=out
await Deno.remove("out/b.txt");
`)
		assert.NoFileExists(t, filepath.Join(me.dir, "out", "b.txt"))
		assert.Equal(t, "beta 1", readText(t, destB))
		assert.Equal(t, mirror.OutcomeNothing, me.status(t, script).Outcome())
	})

	t.Run("a symlink in the source pointing outside is skipped and reported", func(t *testing.T) {
		winetest.RequireSymlinks(t)
		secret := filepath.Join(filepath.Dir(me.dir), "secret.txt")
		require.NoError(t, os.WriteFile(secret, []byte("private"), 0o600))
		require.NoError(t, os.Symlink(secret, filepath.Join(me.dir, "out", "leak.txt")))
		me.succeed(t, "report.ts", `// @permissions write=out
await Deno.writeTextFile("out/c.txt", "gamma");
`)
		assert.Equal(t, "gamma", readText(t, filepath.Join(me.dest, "out", "c.txt")))
		assert.NoFileExists(t, filepath.Join(me.dest, "out", "leak.txt"))
		st := me.status(t, script)
		assert.Equal(t, mirror.OutcomeCopied, st.Outcome())
		assert.Equal(t, []mirror.Skip{{Path: filepath.Join(me.dir, "out", "leak.txt"), Reason: mirror.SkipSourceLink}}, st.Skipped)
	})
}

func TestMirrorFailureLeavesRunSucceeded(t *testing.T) {
	me := newMirrorMgr(t)
	script := me.script(t, "report.ts", "// @permissions write=out.txt\n")
	blocked := filepath.Join(filepath.Dir(me.dir), "blocked")
	me.set(t, script, filepath.Join(blocked, "reports"))
	// The destination's parent is a regular file: no directory can be
	// made under it, whatever the test's privileges.
	require.NoError(t, os.WriteFile(blocked, []byte("in the way"), 0o644))

	entry := me.succeed(t, "report.ts", `// @permissions write=out.txt
await Deno.writeTextFile("out.txt", "result");
`)
	got, ok := me.m.History().Get(entry.ID)
	require.True(t, ok)
	assert.Equal(t, history.StateSucceeded, got.State)
	assert.Empty(t, got.Reason)
	st := me.status(t, script)
	assert.Equal(t, mirror.OutcomeFailed, st.Outcome())
	assert.NotEmpty(t, st.LastError)
	assert.Equal(t, "run "+entry.ID, st.Trigger)
}

func TestMirrorHeaderNowWritesIntoDestination(t *testing.T) {
	me := newMirrorMgr(t)
	script := me.script(t, "report.ts", "// @permissions write=out\n")
	dest := filepath.Join(filepath.Dir(me.dir), "shared")
	me.set(t, script, dest)
	// The header changes (and is approved again) to write into the
	// destination itself: the guard refuses it at the run's end.
	entry := me.succeed(t, "report.ts", `// @permissions write=out,../shared
await Deno.mkdir("out", { recursive: true });
await Deno.writeTextFile("out/a.txt", "a");
`)
	assert.Equal(t, history.StateSucceeded, entry.State)
	st := me.status(t, script)
	assert.Equal(t, mirror.OutcomeFailed, st.Outcome())
	assert.Contains(t, st.LastError, "destination refused")
	assert.NoFileExists(t, filepath.Join(dest, "out", "a.txt"))
}

func TestManagerSync(t *testing.T) {
	me := newMirrorMgr(t)
	ctx := context.Background()
	src := "// @permissions write=out\nawait Deno.mkdir(\"out\", { recursive: true });\nawait Deno.writeTextFile(\"out/a.txt\", \"a\");\n"
	script := me.script(t, "report.ts", src)

	_, err := me.m.Sync(ctx, script)
	require.ErrorIs(t, err, mirror.ErrNoMirror)

	// Declaring a mirror starts nothing that watches.
	before := runtime.NumGoroutine()
	me.set(t, script, me.dest)
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
	assert.False(t, mirrorGoroutines(), "a goroutine runs mirror code")

	// Never run, so never approved: an explicit sync copies nothing.
	require.NoError(t, os.MkdirAll(filepath.Join(me.dir, "out"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(me.dir, "out", "early.txt"), []byte("x"), 0o644))
	_, err = me.m.Sync(ctx, script)
	require.ErrorIs(t, err, ErrMirrorNotApproved)
	assert.Equal(t, mirror.OutcomeNever, me.status(t, script).Outcome())

	me.succeed(t, "report.ts", src)
	assert.FileExists(t, filepath.Join(me.dest, "out", "early.txt"))

	// A file written after the run is not noticed: nothing watches.
	late := filepath.Join(me.dir, "out", "late.txt")
	require.NoError(t, os.WriteFile(late, []byte("late"), 0o644))
	assert.NoFileExists(t, filepath.Join(me.dest, "out", "late.txt"))
	assert.False(t, mirrorGoroutines(), "a goroutine runs mirror code")

	res, err := me.m.Sync(ctx, script)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.FromSlash("out/late.txt")}, res.Copied)
	st := me.status(t, script)
	assert.Equal(t, "sync", st.Trigger)
	assert.Equal(t, 1, st.Copied)

	// An edited, unapproved header is not synced.
	me.script(t, "report.ts", "// @permissions write=out,secrets\n")
	_, err = me.m.Sync(ctx, script)
	require.ErrorIs(t, err, ErrMirrorNotApproved)

	off := newMgr(t, nil)
	_, err = off.m.Sync(ctx, script)
	require.ErrorIs(t, err, ErrNoMirrors)
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// mirrorGoroutines reports whether any goroutine is running mirror code.
// The test's own goroutine is in package runner, so every stack counts.
func mirrorGoroutines() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "tranquil/automation/mirror.")
}
