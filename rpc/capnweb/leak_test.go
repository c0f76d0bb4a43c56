package capnweb

import (
	"testing"

	"github.com/tranquil/automation/internal/testenv"
)

// CheckLeaks fails t if goroutines started during it are still running
// when it ends.
func CheckLeaks(t *testing.T) { testenv.CheckGoroutines(t) }
