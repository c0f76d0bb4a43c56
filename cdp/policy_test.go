package cdp

import (
	"context"
	"testing"
	"time"
)

// newTabWith opens a tab on the shared browser with opts, closed when the
// test ends.
func newTabWith(t *testing.T, url string, opts TabOptions) *Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tab, err := sharedConn.NewTabWith(ctx, url, opts)
	if err != nil {
		t.Fatalf("new tab: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(ctx)
	})
	return tab
}

// attachWith opens a second session on tab's page with other options.
func attachWith(t *testing.T, tab *Tab, opts TabOptions) *Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	other, err := sharedConn.AttachWith(ctx, tab.ID(), opts)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = other.Detach(ctx)
	})
	return other
}
