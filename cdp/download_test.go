package cdp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/testenv"
)

// downloadPayload is what /dl/file serves.
var downloadPayload = bytes.Repeat([]byte("a,b,c\n1,2,3\n"), 5000)

// downloadPages serves a page whose link downloads downloadPayload (as an
// attachment named report.csv), that downloads a blob it made, and that
// links a large download.
func downloadPages() {
	pages.HTML("/dl/", `<!doctype html><title>dl</title><a id=file href="/dl/file">file</a><a id=big href="/dl/big">big</a>
<script>
function blob() {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob(["made in the page"], { type: "text/plain" }));
  a.download = "made.txt";
  document.body.append(a);
  a.click();
}
</script>`)
	pages.Once("/dl/file", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		w.Header().Set("Content-Type", "text/csv")
		_, _ = w.Write(downloadPayload)
	}))
	pages.Once("/dl/big", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="big.bin"`)
		w.Header().Set("Content-Length", fmt.Sprint(1<<20))
		_, _ = w.Write(make([]byte, 1<<20))
	}))
}

// guardedBrowser is a browser of the test's own, guarded as a host's is:
// its download behaviour is the test's alone.
func guardedBrowser(t *testing.T) (*Browser, *Gateway) {
	t.Helper()
	ctx := tctx(t, 60*time.Second)
	p, err := startChromium(ctx, testenv.Chromium(t), true, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = p.Close()
		// The download folder goes with the connection.
		d := p.Browser().downloads.Load()
		if d == nil || d.dir == "" {
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(d.dir); errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("the download folder %s outlived the connection", d.dir)
	})
	g, err := Guard(ctx, p.Browser(), PagePolicy{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return p.Browser(), g
}

// openOn opens a tab guarded by g, as a host's are.
func openOn(t *testing.T, b *Browser, g *Gateway, url string) *Tab {
	t.Helper()
	tab, err := b.NewTabWith(tctx(t, 20*time.Second), url, TabOptions{Gateway: g, Sites: []string{strings.TrimPrefix(site.URL, "http://")}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tab.Close(tctx(t, 5*time.Second)) })
	return tab
}

func TestExpectedDownloadsAreSavedAndTheRestRefused(t *testing.T) {
	payload := downloadPayload
	downloadPages()
	b, g := guardedBrowser(t)
	ctx := tctx(t, 60*time.Second)
	tab := openOn(t, b, g, site.URL+"/dl/")
	other := openOn(t, b, g, site.URL+"/dl/")

	dl, err := tab.ExpectDownload(ctx, DownloadOptions{})
	require.NoError(t, err)
	// The other tab's download, while this one's is expected, is
	// cancelled: it is nobody's.
	_, err = other.Evaluate(ctx, `() => document.getElementById("big").click()`)
	require.NoError(t, err)
	_, err = tab.Evaluate(ctx, `() => document.getElementById("file").click()`)
	require.NoError(t, err)
	f, err := dl.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "report.csv", f.SuggestedName)
	assert.Equal(t, int64(len(payload)), f.Size)
	assert.Equal(t, site.URL+"/dl/file", f.URL)
	got, err := os.ReadFile(f.Path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(payload, got), "the bytes saved are the bytes served")
	dir := filepath.Dir(f.Path)
	time.Sleep(500 * time.Millisecond) // the stray's cancel has gone out
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the expected download is in the folder: %v", entries)
	require.NoError(t, dl.Close())
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "closing the expectation removed its file")
	t.Cleanup(func() {
		// Registered after the browser's: runs before it closes.
		_, err := os.Stat(dir)
		assert.NoError(t, err, "the folder lasts as long as the connection")
	})

	// A blob the page made and downloads with <a download>.
	dl, err = tab.ExpectDownload(ctx, DownloadOptions{})
	require.NoError(t, err)
	_, err = tab.Evaluate(ctx, `() => blob()`)
	require.NoError(t, err)
	f, err = dl.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "made.txt", f.SuggestedName)
	got, err = os.ReadFile(f.Path)
	require.NoError(t, err)
	assert.Equal(t, "made in the page", string(got))
	require.NoError(t, dl.Close())
	_, err = os.Stat(f.Path)
	assert.True(t, errors.Is(err, os.ErrNotExist), "closing removes a file not moved")
}

func TestExpectedDownloadOverItsLimitIsCancelled(t *testing.T) {
	downloadPages()
	b, g := guardedBrowser(t)
	ctx := tctx(t, 60*time.Second)
	tab := openOn(t, b, g, site.URL+"/dl/")
	dl, err := tab.ExpectDownload(ctx, DownloadOptions{MaxBytes: 1000})
	require.NoError(t, err)
	defer dl.Close()
	_, err = tab.Evaluate(ctx, `() => document.getElementById("big").click()`)
	require.NoError(t, err)
	_, err = dl.Wait(ctx)
	require.ErrorIs(t, err, ErrDownloadTooLarge)
	assert.Equal(t, errcode.LimitExceeded, errcode.Of(err))
}

func TestExpectedDownloadTimesOut(t *testing.T) {
	downloadPages()
	b, g := guardedBrowser(t)
	tab := openOn(t, b, g, site.URL+"/dl/")
	dl, err := tab.ExpectDownload(tctx(t, 20*time.Second), DownloadOptions{})
	require.NoError(t, err)
	defer dl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = dl.Wait(ctx)
	require.ErrorIs(t, err, ErrTimeout)
	assert.True(t, strings.Contains(err.Error(), "no download"), err.Error())
}
