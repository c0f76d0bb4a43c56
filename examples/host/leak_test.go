package main

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the run when the tests leave goroutines running. The
// host's own goroutines mostly run in the built binary the tests start;
// this catches the tests' readers of its output and the functions they
// call in process.
func TestMain(m *testing.M) { leakcheck.Main(m) }
