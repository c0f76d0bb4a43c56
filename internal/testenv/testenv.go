package testenv

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/leakcheck"
)

// Install commands printed when a tool is missing.
const (
	DenoInstall     = "make tools   (runs: npm install deno@2.9.6 into .tools/)"
	ChromiumInstall = "apt-get update && apt-get install -y chromium   (or set TRANQUIL_CHROMIUM)"
)

// ErrNotFound reports a tool that is on none of the searched locations.
var ErrNotFound = errors.New("testenv: tool not found")

// RepoRoot returns the directory holding the module's go.mod, found by
// walking up from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/tranquil/automation\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testenv: no go.mod of github.com/tranquil/automation above the working directory")
		}
		dir = parent
	}
}

// LookDeno finds deno without a testing.TB.
func LookDeno() (string, error) {
	return look("TRANQUIL_DENO", []string{"node_modules/.bin/deno"}, []string{"deno"})
}

// LookChromium finds Chromium without a testing.TB.
func LookChromium() (string, error) {
	return look("TRANQUIL_CHROMIUM", []string{"chromium/chrome"}, []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"})
}

// Deno returns the path of the deno binary, or fails t with the install
// command.
func Deno(t testing.TB) string {
	t.Helper()
	p, err := LookDeno()
	if err != nil {
		t.Fatalf("deno is required for this test and was not found (%v).\ninstall it with: %s", err, DenoInstall)
	}
	return p
}

// ChromiumArgs are the flags every browser a test starts gets besides
// the library's defaults: every name but localhost fails inside the
// browser, so no page, and nothing the browser does of its own (a
// spell-check dictionary fetched on the first text typed), looks a name
// up or reaches past loopback. A test that maps names of its own passes
// its own --host-resolver-rules after these, which Chromium then reads.
func ChromiumArgs() []string {
	return []string{"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE *.localhost, EXCLUDE 0.0.0.0, EXCLUDE ::1, EXCLUDE ::ffff:7f00:1"}
}

// Chromium returns the path of a Chromium binary, or fails t with the install
// command.
func Chromium(t testing.TB) string {
	t.Helper()
	p, err := LookChromium()
	if err != nil {
		t.Fatalf("chromium is required for this test and was not found (%v).\ninstall it with: %s", err, ChromiumInstall)
	}
	return p
}

func look(envVar string, toolsRel, names []string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%w: $%s=%q is not an executable file", ErrNotFound, envVar, p)
	}
	if root, err := RepoRoot(); err == nil {
		for _, rel := range toolsRel {
			p := filepath.Join(root, ".tools", filepath.FromSlash(rel))
			if runtime.GOOS == "windows" {
				p += ".exe"
			}
			if isExecutable(p) {
				return p, nil
			}
		}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: not in $%s, .tools or PATH (%s)", ErrNotFound, envVar, strings.Join(names, ", "))
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode()&0o111 != 0
}

// CheckGoroutines records the goroutines running now and, when t ends, fails
// it if goroutines started since are still running after a grace period.
// Call it first in a test that must not leak; it is not for parallel tests,
// whose goroutines overlap.
func CheckGoroutines(t testing.TB) {
	t.Helper()
	before := leakcheck.Snapshot()
	t.Cleanup(func() {
		if left := before.Since(checkGrace); len(left) > 0 {
			t.Errorf("goroutine leak: %d still running\n%s", len(left), strings.Join(left, "\n\n"))
		}
	})
}

// checkGrace is how long CheckGoroutines waits for a test's goroutines to
// end: a closed connection's reader ends a moment after the close.
const checkGrace = 3 * time.Second

// DenoCacheDir is the deno module cache tests share, so that each test's
// run manager does not download the SDK's npm dependency again: $DENO_DIR,
// else deno's own default under the user cache directory.
func DenoCacheDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("DENO_DIR"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache directory for deno: %v", err)
	}
	return filepath.Join(base, "deno")
}

// ChromiumWithPort starts headless Chromium the way a user-started browser
// runs, with --remote-debugging-port=0 and a temporary profile, and
// returns its debugging address (http://127.0.0.1:PORT) once
// DevToolsActivePort names it. The browser is killed when t ends. It is
// for tests of attaching to a browser over a port; the library's own
// launches open none.
func ChromiumWithPort(t testing.TB) string {
	t.Helper()
	// Not t.TempDir: the browser's helpers outlive its main process by a
	// moment and may still write to the profile when the test ends.
	dir, err := os.MkdirTemp("", "testenv-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	if err := browserproc.WriteProfilePrefs(dir); err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	args := append([]string{"--headless=new", "--user-data-dir=" + dir, "--remote-debugging-port=0"}, browserproc.SandboxArgs()...)
	args = append(append(append(args, browserproc.DefaultFlags()...), ChromiumArgs()...), "about:blank")
	cmd := exec.Command(Chromium(t), args...)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for i := 0; os.RemoveAll(dir) != nil && i < 40; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); err == nil && len(lines) == 2 {
			return "http://127.0.0.1:" + strings.TrimSpace(lines[0])
		}
	}
	t.Fatal("chromium published no DevTools port within 30s")
	return ""
}

// LoopbackCSP is the Content-Security-Policy of every test page: it loads
// and connects only to loopback (inline code, data: and blob: included),
// so a page that went wrong cannot reach past this machine.
const LoopbackCSP = "default-src 'self' http://127.0.0.1:* http://localhost:* ws://127.0.0.1:* ws://localhost:* " +
	"data: blob: 'unsafe-inline'; form-action 'self' http://127.0.0.1:* http://localhost:*"

// LoopbackOnly serves h with LoopbackCSP on every response.
func LoopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", LoopbackCSP)
		h.ServeHTTP(w, r)
	})
}

// BrowserPeers returns bench/browser, where the Node.js peers of the
// browser benchmarks live, failing tb when any of pkgs is not installed
// there.
func BrowserPeers(tb testing.TB, pkgs ...string) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(root, "bench", "browser")
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p)); err != nil {
			tb.Fatalf("%s is not installed: run bench/browser/run (npm install in %s)", p, dir)
		}
	}
	return dir
}
