package cdp

import (
	"context"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/testenv"
)

// launchWithPort starts headless Chromium with --remote-debugging-port=0
// and reads the port from DevToolsActivePort, the way a user-started
// browser or an Electron launch looks. The shared browser opens no port, so
// tests of the WebSocket path need this. It ends with the test.
func launchWithPort(t *testing.T) *testBrowser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := startChromium(ctx, testenv.Chromium(t), false, nil)
	if err != nil {
		t.Fatalf("launch with a port: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}
