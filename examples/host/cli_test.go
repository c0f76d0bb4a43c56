package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommandLine holds the built program to its usage text and exit codes
// as a shell sees them.
func TestCommandLine(t *testing.T) {
	e := newHostEnv(t)
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(src), 0o600))
		return p
	}
	bad := write("bad.ts", "// @permissions brwoser\n")
	boom := write("boom.ts", "// @permissions none\nthrow new Error(\"boom\");\n")

	t.Run("help", func(t *testing.T) {
		for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"run", "--help"}, {"plan", "-h"}} {
			r := e.host(t, "", args...)
			assert.Equal(t, exitOK, r.code, "%v: %s", args, r.stderr)
			assert.Contains(t, r.stdout, "usage: host", "%v", args)
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		r := e.host(t, "", "frobnicate")
		assert.Equal(t, exitUsage, r.code, r.stderr)
		r = e.host(t, "", "run", "--approve", bad)
		assert.Equal(t, exitRefused, r.code, "refused: %s%s", r.stdout, r.stderr)
		r = e.host(t, "", "run", "--approve", boom)
		assert.Equal(t, exitFailed, r.code, "failed: %s%s", r.stdout, r.stderr)
		r = e.host(t, "", "plan", bad)
		assert.Equal(t, exitRefused, r.code, "plan: %s%s", r.stdout, r.stderr)
	})

	t.Run("a mistyped script is a usage error", func(t *testing.T) {
		before := e.host(t, "", "history", "--json")
		nope := filepath.Join(dir, "nope.ts")
		for _, args := range [][]string{{"run", "--approve", nope}, {"plan", nope}} {
			r := e.host(t, "", args...)
			assert.Equal(t, exitUsage, r.code, "%v: %s%s", args, r.stdout, r.stderr)
			assert.Contains(t, r.stderr, "nope.ts")
		}
		after := e.host(t, "", "history", "--json")
		assert.Equal(t, before.stdout, after.stdout, "a mistyped path was recorded as a run")
	})

	t.Run("plan and run place an error alike", func(t *testing.T) {
		want := bad + ":1:17: unknown key"
		r := e.host(t, "", "plan", bad)
		assert.Contains(t, r.stdout, want)
		r = e.host(t, "", "run", "--approve", bad)
		assert.Contains(t, r.stdout, want)
	})

	t.Run("doctor creates nothing", func(t *testing.T) {
		fresh := &hostEnv{bin: e.bin, data: filepath.Join(t.TempDir(), "data")}
		scratch := t.TempDir()
		fresh.env = append(append([]string{}, e.env...), "TMPDIR="+scratch)
		r := fresh.host(t, "", "doctor")
		assert.Equal(t, exitOK, r.code, "%s%s", r.stdout, r.stderr)
		assert.Contains(t, r.stdout, "not created yet")
		assert.NoDirExists(t, fresh.data)
		left, err := os.ReadDir(scratch)
		require.NoError(t, err)
		assert.Empty(t, left, "doctor left its scratch copy")
	})
}
