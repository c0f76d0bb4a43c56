package testenv

import (
	"testing"
	"time"

	"github.com/tranquil/automation/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }

// PeakOf sees what is allocated while it samples, and its sampler stops
// when asked (the leak gate above fails a goroutine left running).
func TestPeakOfSeesAnAllocation(t *testing.T) {
	stop := PeakOf(HeapObjects)
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = byte(i)
	}
	time.Sleep(20 * time.Millisecond) // several sampling intervals
	grew := stop()
	if grew < 32<<20 {
		t.Fatalf("a 64 MiB allocation held while sampling grew the peak by %d bytes", grew)
	}
	_ = held[len(held)-1]
}
