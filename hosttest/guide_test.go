package hosttest_test

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

	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// TestPickOpensTheSecondProduct is the guide's Go test, word for word
// (TestGuideRealKit holds the guide to it).
func TestPickOpensTheSecondProduct(t *testing.T) {
	res := hosttest.Run(t, hosttest.Script{
		Path:    "testdata/pick.ts",
		Pages:   os.DirFS("testdata/pages"),
		Approve: true, // the test gives the consent a person would
	})
	if !res.Succeeded() || string(res.Entry.Result) != `"Coffee"` {
		t.Fatalf("the run: %s %s", res.Entry.State, res.Entry.Result)
	}
}

// realKitSection returns the guide's "The same script against a real
// browser", up to the next section.
func realKitSection(t *testing.T) string {
	t.Helper()
	guide, err := os.ReadFile(filepath.Join("..", "runner", "sdk", "writing-automations.md"))
	require.NoError(t, err)
	s := string(guide)
	i := strings.Index(s, "\n### The same script against a real browser\n")
	require.GreaterOrEqual(t, i, 0, "the guide has lost its real-browser section")
	s = s[i+1:]
	if j := regexp.MustCompile(`\n##+ `).FindStringIndex(s[4:]); j != nil {
		s = s[:4+j[0]]
	}
	return s
}

// realKitFiles returns the section's files by name: each ```ts block that
// starts "// NAME" and each ```html block that starts "<!-- NAME -->", and
// its ```go block.
func realKitFiles(t *testing.T, sec string) (files map[string]string, goTest string) {
	t.Helper()
	files = map[string]string{}
	for _, m := range regexp.MustCompile("(?s)```(?:ts|html)\n((?:// |<!-- )([\\w./]+)(?: -->)?\n.*?)```").FindAllStringSubmatch(sec, -1) {
		files[m[2]] = m[1]
	}
	for _, name := range []string{"pick.ts", "pages/index.html", "pages/item.html", "pick_test.ts", "pick_real_test.ts"} {
		require.Contains(t, files, name, "the section shows no %s", name)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(sec)
	require.NotNil(t, m, "the section shows no Go test")
	return files, m[1]
}

// TestGuideRealKit runs the guide's real-browser section as a reader
// would: its script with its fake test (pick_test.ts) and its real-host
// test (pick_real_test.ts, by the printed command, the example host built
// here), and holds its Go test and this package's testdata to it. Then it
// runs the same tests on the two mistakes the section names, a wrong nth
// and a link that redirects in JavaScript: the fake test passes both, the
// real one fails both, saying what the page showed.
func TestGuideRealKit(t *testing.T) {
	deno, chromium := testenv.Deno(t), testenv.Chromium(t)
	sec := realKitSection(t)
	files, goTest := realKitFiles(t, sec)
	for _, name := range []string{"pick.ts", "pages/index.html", "pages/item.html"} {
		data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
		require.NoError(t, err)
		assert.Equal(t, files[name], string(data), "testdata/%s is the guide's %s", name, name)
	}
	self, err := os.ReadFile("guide_test.go")
	require.NoError(t, err)
	assert.Contains(t, string(self), goTest, "the guide's Go test is TestPickOpensTheSecondProduct, word for word")
	m := regexp.MustCompile("`(TRANQUIL_HOST=\\./host (deno test [^`]+))`").FindStringSubmatch(sec)
	require.NotNil(t, m, "the section prints no command for its real-host test")

	tmp := t.TempDir()
	host := filepath.Join(tmp, "host")
	build := exec.Command("go", "build", "-o", host, "../examples/host")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the example host:\n%s", out)
	sdk, err := runner.MaterializeSDK(filepath.Join(tmp, "data", "sdk"))
	require.NoError(t, err)
	_, err = runner.PublishSDK(sdk)
	require.NoError(t, err)
	real := strings.Fields(strings.ReplaceAll(m[2], "<data>", filepath.Join(tmp, "data")))
	fake := []string{"test", "--config=" + sdk.Config, "--allow-read", "pick_test.ts"}

	for _, c := range []struct {
		name       string
		edit       func(map[string]string) map[string]string
		realFailed string // what the failing real test shows; "" when it passes
	}{
		{"as printed", nil, ""},
		{"wrong nth", func(f map[string]string) map[string]string {
			f["pick.ts"] = strings.Replace(f["pick.ts"], "nth: 1", "nth: 2", 1)
			return f
		}, `result: "Cocoa"`},
		{"javascript redirect", func(f map[string]string) map[string]string {
			f["pages/index.html"] = strings.Replace(f["pages/index.html"], coffeeLink, redirectingLink, 1)
			return f
		}, `result: "Sold out"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := map[string]string{}
			for k, v := range files {
				fs[k] = v
			}
			if c.edit != nil {
				before := fs["pick.ts"] + fs["pages/index.html"]
				fs = c.edit(fs)
				require.NotEqual(t, before, fs["pick.ts"]+fs["pages/index.html"], "the mistake was not made")
			}
			for name, text := range fs {
				p := filepath.Join(dir, filepath.FromSlash(name))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
				require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
			}
			env := []string{"NO_COLOR=1", "DENO_NO_UPDATE_CHECK=1", "DENO_DIR=" + testenv.DenoCacheDir(t),
				"TRANQUIL_CHROMIUM=" + chromium, "TRANQUIL_HOST=" + host}
			fakeOut, err := denoTest(t, deno, dir, env, fake)
			require.NoError(t, err, "the fake test passes: it cannot see the pages\n%s", fakeOut)

			realOut, err := denoTest(t, deno, dir, env, real[1:])
			if c.realFailed == "" {
				require.NoError(t, err, "%s\n%s", m[1], realOut)
				return
			}
			require.Error(t, err, "the real-host test must catch the %s:\n%s", c.name, realOut)
			assert.Contains(t, realOut, c.realFailed)
			assert.Contains(t, realOut, "item.html", "the explanation says where the tab went")
			assert.Regexp(t, `calls:\n.*\n\s+2 \+[0-9.]+s tab\.`, realOut, "the host's record carries the trace's calls")
			t.Logf("the real-host test failed, saying:\n%s", realOut)
		})
	}
}

// denoTest runs deno with args in dir and returns its output.
func denoTest(t *testing.T, deno, dir string, env, args []string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, deno, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + os.Getenv("HOME"), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
