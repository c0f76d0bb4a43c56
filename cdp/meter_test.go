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

	grown := heapGrowth()
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
	grew := grown()
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

// heapGrowth samples the Go heap, garbage not yet collected included,
// until the returned function is called, which returns the peak growth
// over the start.
func heapGrowth() func() int64 {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
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
	return func() int64 {
		close(stop)
		wg.Wait()
		return int64(peak.Load()) - int64(before.HeapAlloc)
	}
}

// What a page writes to its console or throws is an event whose size the
// page chooses: one past maxPageTextEvent is not read (it was, whole, up to
// 256 MiB, and decoded several times over); its session gets a stand-in
// saying how large it was. Smaller ones arrive whole.
func TestPageTextEventsPastTheirBoundAreNotRead(t *testing.T) {
	tab := newTab(t, serve("/page-text-events", `<title>loud</title>`))
	var mu sync.Mutex
	var console, thrown []string
	defer tab.OnConsole(func(m ConsoleMessage) {
		mu.Lock()
		console = append(console, m.Text)
		mu.Unlock()
	})()
	defer tab.OnPageError(func(e *EvalError) {
		mu.Lock()
		thrown = append(thrown, e.Message)
		mu.Unlock()
	})()
	ctx := tctx(t, 60*time.Second)
	grown := heapGrowth()
	_, err := tab.Evaluate(ctx, `() => {
  const s = "x".repeat(8 << 20);
  for (let i = 0; i < 3; i++) console.log(s + i);
  setTimeout(() => { throw new Error(s); });
  setTimeout(() => console.log("small"), 50);
}`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(console) == 4 && len(thrown) == 1
	}, 30*time.Second, 20*time.Millisecond)
	grew := grown()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("three 8 MiB console messages and an 8 MiB exception; host heap grew by at most %.1f MiB", float64(grew)/(1<<20))
	require.Less(t, grew, int64(16<<20), "the page's large messages were read")
	for _, m := range console[:3] {
		require.Regexp(t, `^\(a console message of 83[89]\d{4} bytes, too large to read\)$`, m)
	}
	require.Equal(t, "small", console[3])
	require.Regexp(t, `\(an exception of 83[89]\d{4} bytes, too large to read\)`, thrown[0])
}
