package cdp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/leakcheck"
	"github.com/tranquil/automation/internal/testenv"
)

// One browser serves the whole package; each test opens its own tab.
var (
	shared     *testBrowser
	sharedConn *Browser
	tempRoot   string
	pages      = http.NewServeMux()
	site       *httptest.Server // 127.0.0.1
	siteOther  string           // the same server as "localhost": another site, another renderer
)

// TestMain fails the package when its tests leave goroutines (see
// leakcheck), browser processes or profiles behind (checkLeaks).
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Wrap(func() int { return runMain(m) }))
}

func runMain(m *testing.M) int {
	chromium, err := testenv.LookChromium()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chromium is required for the cdp tests and was not found (%v).\ninstall it with: %s\n", err, testenv.ChromiumInstall)
		return 1
	}
	tempRoot, err = os.MkdirTemp("", "cdp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tempRoot)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	site = &httptest.Server{Listener: ln, Config: &http.Server{Handler: testenv.LoopbackOnly(pages)}}
	site.Start()
	defer site.Close()
	siteOther = strings.Replace(site.URL, "127.0.0.1", "localhost", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shared, err = startChromium(ctx, chromium, true, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sharedConn = shared.Browser() // over the pipe: the browser has no port
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := checkLeaks(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	return code
}

// checkLeaks fails the run if a launched browser left a process or a
// profile directory behind.
func checkLeaks() error {
	entries, _ := os.ReadDir(tempRoot)
	if len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return fmt.Errorf("leak: profile directories left in %s: %v", tempRoot, names)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.Contains(string(b), tempRoot) {
			// Zombies have an empty cmdline, so a match is a live process.
			return fmt.Errorf("leak: browser process still running: %s: %s", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return nil
}

var registerOnce sync.Map

// serve registers an HTML page on the shared server (once per path) and
// returns its URL on 127.0.0.1.
func serve(path, html string) string {
	if _, loaded := registerOnce.LoadOrStore(path, true); !loaded {
		pages.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, html)
		})
	}
	return site.URL + path
}

// newTab opens a tab on the shared browser at url (blank when empty),
// closed when the test ends.
func newTab(t *testing.T, url string) *Tab {
	t.Helper()
	return newTabWith(t, url, TabOptions{})
}

func tctx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
