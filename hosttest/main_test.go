package hosttest_test

import (
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
