package leakcheck

import (
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestSinceFindsAGoroutineLeftRunning(t *testing.T) {
	before := Snapshot()
	stop := make(chan struct{})
	go func() { <-stop }()
	left := before.Since(20 * time.Millisecond)
	if len(left) != 1 || !strings.Contains(left[0], "TestSinceFindsAGoroutineLeftRunning") {
		t.Fatalf("want the one goroutine started here, got %q", left)
	}
	close(stop)
	if left := before.Since(5 * time.Second); len(left) > 0 {
		t.Fatalf("a goroutine that ended is still reported: %q", left)
	}
}
