package rpc

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the run when the tests leave goroutines running.
func TestMain(m *testing.M) { leakcheck.Main(m) }
