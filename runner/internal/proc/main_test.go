package proc

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the binary when a test left a Child's waiter or a
// supervisor's cancel running.
func TestMain(m *testing.M) { leakcheck.Main(m) }
