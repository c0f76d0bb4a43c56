package cdp

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
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
	pages      = testenv.NewPages()
	site       *httptest.Server // 127.0.0.1
	siteOther  string           // the same server as "localhost": another site, another renderer
)

// TestMain fails the package when its tests leave goroutines (see
// leakcheck), browser processes or profiles behind (testenv.BrowserLeaks).
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

	site = testenv.Site(pages)
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
		if err := testenv.BrowserLeaks(tempRoot); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	return code
}

// serve registers an HTML page on the shared server (once per path) and
// returns its URL on 127.0.0.1.
func serve(path, html string) string {
	pages.HTML(path, html)
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
