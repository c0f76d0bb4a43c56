package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// TestCurrentSDKIsStable: the editor's deno.json and the guide live at
// <DataDir>/sdk/current whatever the build, and the deno.json there
// type-checks a script against the newest build.
func TestCurrentSDKIsStable(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newMgr(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cur, err := e.m.CurrentSDK(ctx)
	require.NoError(t, err)
	assert.Equal(t, CurrentSDKPaths(e.data), cur)
	assert.Equal(t, filepath.Join(e.data, "sdk", "current", "deno.json"), cur.Config)
	guide, err := os.ReadFile(cur.Guide)
	require.NoError(t, err)
	want, err := sdkFS.ReadFile("sdk/writing-automations.md")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(guide))

	p := e.script(t, "job.ts", "// @permissions clipboard\nimport { clipboard } from \"tranquil/automation\";\n"+
		"import { installFakeHost } from \"tranquil/automation/testing\";\nconst n: number = (await clipboard.read()).length;\n"+
		"void installFakeHost;\nconsole.log(n);\n")
	cmd := exec.CommandContext(ctx, testenv.Deno(t), "check", "--no-lock", "--config="+cur.Config, p)
	cmd.Env = sdkEnv(t, testenv.Deno(t), "HOME="+os.Getenv("HOME"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	// Publishing the same build again writes nothing.
	before, err := os.Stat(cur.Config)
	require.NoError(t, err)
	build, err := MaterializeSDK(filepath.Join(e.data, "sdk"))
	require.NoError(t, err)
	_, err = PublishSDK(build)
	require.NoError(t, err)
	after, err := os.Stat(cur.Config)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after) && before.ModTime().Equal(after.ModTime()), "rewritten")

	// Another build moves current along with it.
	next := filepath.Join(e.data, "sdk", "sdk-0123456789abcdef")
	require.NoError(t, os.CopyFS(next, os.DirFS(build.Dir)))
	cur2, err := PublishSDK(SDKPaths{Dir: next, Bootstrap: filepath.Join(next, "main.ts"), Config: filepath.Join(next, "deno.json")})
	require.NoError(t, err)
	assert.Equal(t, cur, cur2)
	config, err := os.ReadFile(cur.Config)
	require.NoError(t, err)
	assert.Contains(t, string(config), `"tranquil/automation": "../sdk-0123456789abcdef/mod.ts"`)
	assert.NotContains(t, string(config), filepath.Base(build.Dir))
}

// TestExampleScriptsNameTheirGuide: the first line of every example
// script names the guide by a path that exists.
func TestExampleScriptsNameTheirGuide(t *testing.T) {
	scripts, err := filepath.Glob("../examples/scripts/*.ts")
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		src, err := os.ReadFile(s)
		require.NoError(t, err)
		first, _, _ := strings.Cut(string(src), "\n")
		_, guide, ok := strings.Cut(first, "How to write one: ")
		require.True(t, ok, "%s: %s", s, first)
		_, err = os.Stat(filepath.Join(filepath.Dir(s), filepath.FromSlash(guide)))
		assert.NoError(t, err, "%s names %q", s, guide)
	}
}
