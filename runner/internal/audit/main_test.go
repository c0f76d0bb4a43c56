package audit

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the binary when a test left a pipe's reader running.
func TestMain(m *testing.M) { leakcheck.Main(m) }
