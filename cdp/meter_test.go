package cdp

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// testMeter is a Meter with a fixed budget that records its peak.
type testMeter struct {
	max        int64
	used, peak atomic.Int64
}

func (m *testMeter) Left() int64 { return m.max - m.used.Load() }
func (m *testMeter) Take(n int64, what string) error {
	if u := m.used.Add(n); u > m.max {
		m.used.Add(-n)
		return errors.New(what + " does not fit")
	}
	for p := m.peak.Load(); m.used.Load() > p && !m.peak.CompareAndSwap(p, m.used.Load()); p = m.peak.Load() {
	}
	return nil
}
func (m *testMeter) Give(n int64) { m.used.Add(-n) }

// A page that answers a call with more than its tab's meter has left gets
// limit_exceeded, and the host never builds the reply: its heap grows by a
// small part of the reply's size, whatever the reply's size. The meter is
// whole again afterwards, and a call that fits still works.
func TestReplyPastTheMeterIsNeverBuilt(t *testing.T) {
	m := &testMeter{max: 4 << 20}
	tab := newTabWith(t, serve("/meter-big", `<p>big</p>`), TabOptions{Meter: m})
	ctx := tctx(t, 60*time.Second)
	// About 24 MB of JSON of many small objects, the shape that grows most
	// when decoded.
	const big = `() => Array.from({length: 800000}, (_, i) => ({i, s: "ab"}))`

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // samples the heap while the calls run
		defer wg.Done()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
		}
	}()
	var calls sync.WaitGroup
	for range 2 {
		calls.Add(1)
		go func() {
			defer calls.Done()
			_, err := tab.Evaluate(ctx, big)
			require.ErrorIs(t, err, errcode.LimitExceeded)
			require.ErrorIs(t, err, ErrOverBudget)
			require.Contains(t, err.Error(), "memory budget")
		}()
	}
	calls.Wait()
	close(stop)
	wg.Wait()
	grew := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("two 24 MB replies refused; host heap grew by at most %.1f MiB", float64(grew)/(1<<20))
	require.Less(t, grew, int64(32<<20), "the refused replies were built")
	require.Equal(t, int64(0), m.used.Load(), "the meter is not whole again")

	got, err := tab.Evaluate(ctx, `() => ({ok: [1, 2]})`)
	require.NoError(t, err)
	require.JSONEq(t, `{"ok":[1,2]}`, string(got))
	require.Positive(t, m.peak.Load(), "a reply that fits is charged while it is decoded")
}

// A target's description quotes at most maxShown bytes of each of its
// texts, so describing a target that holds megabytes (for an error, the
// log or the trace, on every poll of a wait) costs the host little.
func TestTargetDescriptionIsBounded(t *testing.T) {
	big := strings.Repeat("é", 1<<19) // a MiB, two bytes a character
	deep := Locator{Role: "button", Name: big, HasText: big,
		Within: &Locator{Text: big, Within: &Locator{Label: big, Has: &Locator{Selector: big}}}}
	s := deep.String()
	require.Less(t, len(s), 2000, s)
	require.Contains(t, s, `… (1048576 bytes)`)
	require.True(t, utf8.ValidString(s))
	allocs := testing.AllocsPerRun(10, func() { _ = deep.String() })
	require.Less(t, allocs, 64.0)
	require.Equal(t, `role "button" name "Save"`, Locator{Role: "button", Name: "Save"}.String(), "short texts are shown whole")
}
