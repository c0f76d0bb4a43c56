package launch

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/leakcheck"
	"github.com/tranquil/automation/internal/testenv"
)

// One browser serves the tests that need a page; each opens its own tab.
var (
	shared   *Process
	tempRoot string
	pages    = testenv.NewPages()
	site     *httptest.Server // 127.0.0.1
)

func TestMain(m *testing.M) {
	if os.Getenv(orphanHelperEnv) != "" {
		os.Exit(orphanHelper())
	}
	os.Exit(leakcheck.Wrap(func() int { return runMain(m) }))
}

func runMain(m *testing.M) int {
	chromium, err := testenv.LookChromium()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chromium is required for the launch tests and was not found (%v).\ninstall it with: %s\n", err, testenv.ChromiumInstall)
		return 1
	}
	// Short: a profile under it must leave room for Chromium's singleton
	// socket path (see maxSocketPath), or the TMPDIR tests see the
	// fallback instead.
	tempRoot, err = os.MkdirTemp("", "lt-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tempRoot)

	site = testenv.Site(pages)
	defer site.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	shared, err = Chromium(ctx, Options{Path: chromium, TempDir: tempRoot})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
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

// newTab opens a tab on the shared browser at url, closed when the test
// ends.
func newTab(t *testing.T, url string) *cdp.Tab {
	t.Helper()
	ctx := tctx(t, 20*time.Second)
	tab, err := shared.Browser().NewTab(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(ctx)
	})
	return tab
}

func tctx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
