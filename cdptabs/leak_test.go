package cdptabs

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the run when the tests leave goroutines running: a
// connection's watcher that Shutdown did not stop, or a browser's.
func TestMain(m *testing.M) { leakcheck.Main(m) }
