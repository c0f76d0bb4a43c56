package testenv

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// HeapObjects is the runtime metric of the heap's objects, garbage not
// yet collected included.
const HeapObjects = "/memory/classes/heap/objects:bytes"

// PeakOf samples a runtime metric (such as HeapObjects or
// "/gc/heap/live:bytes") every millisecond until the returned function is
// called, which stops the sampling and returns the metric's peak growth
// over the start. A test that reads it measures the whole process, so it
// must not run in parallel with others.
func PeakOf(metric string) func() int64 {
	read := func() uint64 {
		s := []metrics.Sample{{Name: metric}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		wg.Wait()
		return int64(peak.Load()) - int64(base)
	}
}
