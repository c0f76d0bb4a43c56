package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// guideSection returns the text of the guide's section that starts with
// heading, up to the next "## ".
func guideSection(t *testing.T, heading string) string {
	t.Helper()
	guide, err := sdkFS.ReadFile("sdk/writing-automations.md")
	require.NoError(t, err)
	s := string(guide)
	i := strings.Index(s, "\n"+heading)
	require.GreaterOrEqual(t, i, 0, "the guide has no %q", heading)
	s = s[i+1:]
	if j := strings.Index(s[len(heading):], "\n## "); j >= 0 {
		s = s[:len(heading)+j]
	}
	return s
}

// TestGuideTestCommandRunsAsPrinted lays down the SDK as the app does, writes
// the files of the guide's "Testing offline" section (each ```ts block whose
// first line is "// <file>") and runs the deno test command the section
// prints, word for word but for <data>: the guide's example must pass as a
// reader would run it. Any fetch goes to a closed loopback port.
func TestGuideTestCommandRunsAsPrinted(t *testing.T) {
	t.Parallel() // see parallel_test.go
	deno := testenv.Deno(t)
	sec := guideSection(t, "## 5. Testing offline")

	dir := t.TempDir()
	blocks := regexp.MustCompile("(?s)```ts\n// ([\\w.]+\\.ts)\n(.*?)```").FindAllStringSubmatch(sec, -1)
	require.GreaterOrEqual(t, len(blocks), 2, "the section shows no script and test files")
	for _, b := range blocks {
		require.NoError(t, os.WriteFile(filepath.Join(dir, b[1]), []byte(b[2]), 0o600))
	}
	m := regexp.MustCompile("`(deno test [^`]+)`").FindStringSubmatch(sec)
	require.NotNil(t, m, "the section prints no deno test command")

	data := t.TempDir()
	build, err := MaterializeSDK(filepath.Join(data, "sdk"))
	require.NoError(t, err)
	_, err = PublishSDK(build)
	require.NoError(t, err)
	args := strings.Fields(strings.ReplaceAll(m[1], "<data>", data))
	for _, a := range args[2:] {
		if strings.HasSuffix(a, "_test.ts") {
			_, err := os.Stat(filepath.Join(dir, a))
			require.NoError(t, err, "the command names %s, which the section does not show", a)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, deno, args[1:]...)
	cmd.Dir = dir
	closed := "http://127.0.0.1:9"
	cmd.Env = sdkEnv(t, deno, "HOME="+os.Getenv("HOME"), "HTTP_PROXY="+closed, "HTTPS_PROXY="+closed,
		"NPM_CONFIG_REGISTRY="+closed+"/", "JSR_URL="+closed+"/")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:\n%s", m[1], out)
	assert.Regexp(t, `ok \| [1-9][0-9]* passed \| 0 failed`, string(out))
}
