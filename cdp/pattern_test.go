package cdp

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// slowPattern is 100 bytes that compile to 9,003 instructions, within
// MaxPatternInstructions: over text of letters alone it keeps some 9,000
// threads alive for each character and never matches, so a megabyte of
// it takes the better part of a minute.
var slowPattern = strings.Repeat(`[a-z]{1000}`, 9) + "!"

// An expectation whose pattern takes long to match a megabyte of page
// text ends with its timeout, or its cancel, as any other does.
func TestExpectPatternEndsWithItsContext(t *testing.T) {
	tab := newTab(t, serve("/pattern-big", `<p id=big></p><script>document.getElementById("big").textContent = "a".repeat(1 << 20);</script>`))
	p, err := CompilePattern(slowPattern, "")
	require.NoError(t, err)
	big := Locator{Selector: "#big"}
	e := Expectation{Kind: ExpectText, Pattern: p}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err = tab.Expect(ctx, big, e)
	took := time.Since(start)
	t.Logf("a 1 s expectation returned after %v: %v", took, err)
	require.ErrorIs(t, err, errcode.Timeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The wait, then one last look at the megabyte for what was seen: a
	// loaded machine under -race needs up to about 2 s for both; the old
	// code matched for minutes.
	require.Less(t, took, 3*time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	stop := time.AfterFunc(500*time.Millisecond, cancel)
	defer stop.Stop()
	start = time.Now()
	err = tab.Expect(ctx, big, e)
	took = time.Since(start)
	t.Logf("an expectation cancelled after 500 ms returned after %v: %v", took, err)
	require.ErrorIs(t, err, context.Canceled)
	// As above: the cancel, then the last look; it took 1.07 s once at
	// load 5 under -race.
	require.Less(t, took, 3*time.Second)
}

// BenchmarkExpectSmallPattern measures what a script's usual expectation
// costs, end to end on a real page: a short pattern that holds at once.
// Its p50 is compared across builds (run it on each, interleaved); the
// target is within 5% of a build without the pattern limits.
func BenchmarkExpectSmallPattern(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tab, err := sharedConn.NewTabWith(ctx, serve("/bench-expect", `<p role=status>Saved at 10:00</p>`), TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close(context.WithoutCancel(ctx))
	p, err := CompilePattern(`^saved at \d+:\d+$`, "i")
	if err != nil {
		b.Fatal(err)
	}
	e := Expectation{Kind: ExpectText, Pattern: p}
	status := Locator{Selector: "[role=status]"}
	var took []float64
	for b.Loop() {
		start := time.Now()
		if err := tab.Expect(ctx, status, e); err != nil {
			b.Fatal(err)
		}
		took = append(took, float64(time.Since(start).Microseconds()))
	}
	slices.Sort(took)
	b.ReportMetric(took[len(took)/2], "p50-µs")
}
