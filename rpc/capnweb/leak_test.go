package capnweb

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
	"github.com/tranquil/automation/internal/testenv"
)

// TestMain fails the run when the tests, internal and external alike,
// leave goroutines running.
func TestMain(m *testing.M) { leakcheck.Main(m) }

// CheckLeaks fails t if goroutines started during it are still running
// when it ends: it names the test, where TestMain's check names only the
// goroutines.
func CheckLeaks(t *testing.T) { testenv.CheckGoroutines(t) }
