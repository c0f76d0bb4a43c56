package modgraph

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the binary when a test left a deno command's goroutines
// running.
func TestMain(m *testing.M) { leakcheck.Main(m) }
