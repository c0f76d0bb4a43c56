package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// outputLines is a MiB of output as a run prints it: lines of text, some
// with characters JSON escapes.
var outputLines = strings.Repeat("a line: \"quoted\" \\ tab\t<html> ünïcödé and some more words\n", 1<<20/32)

// runOutput is n bytes (at most a MiB) of output of run seed.
func runOutput(n int, seed int) string {
	head := fmt.Sprintf("run %d\n", seed)
	return head + outputLines[:n-len(head)]
}

// journalLines returns the size of each line of the journal at path.
func journalLines(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var sizes []int
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) > 0 {
			sizes = append(sizes, len(l))
		}
	}
	return sizes
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		fi, err := e.Info()
		require.NoError(t, err)
		n += fi.Size()
	}
	return n
}

// At the defaults, 100 runs that each print 1 MiB (the runner's default
// output cap) and keep a 3 MiB trace, each run Put as the runner does
// (queued, running, finished): the journal never passes DefaultMaxBytes,
// no line passes DefaultEntryCap, the traces stay within
// DefaultTraceTotal, and the newest runs are the ones kept, whole.
func TestDefaultCapsHoldForRunsWithLargeOutput(t *testing.T) {
	testenv.CheckGoroutines(t)
	path := filepath.Join(t.TempDir(), "history.jsonl")
	s, err := Open(path, Options{})
	require.NoError(t, err)
	defer s.Close()
	trace := bytes.Repeat([]byte("t"), 3<<20)
	var peak int64
	const runs = DefaultCapacity
	for i := range runs {
		e := Entry{ID: fmt.Sprintf("run-%03d", i), State: StateQueued, Start: t0.Add(time.Duration(i) * time.Second)}
		require.NoError(t, s.Put(e))
		e.State = StateRunning
		require.NoError(t, s.Put(e))
		e.State, e.End, e.Output = StateSucceeded, e.Start.Add(time.Second), runOutput(1<<20, i)
		require.NoError(t, s.Put(e))
		require.NoError(t, s.PutTrace(e.ID, trace))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		peak = max(peak, fi.Size())
		require.LessOrEqual(t, fi.Size(), int64(DefaultMaxBytes), "after run %d", i)
	}
	for i, n := range journalLines(t, path) {
		assert.LessOrEqual(t, n, DefaultEntryCap, "line %d", i+1)
	}
	assert.LessOrEqual(t, dirBytes(t, path+".traces"), int64(DefaultTraceTotal))
	kept := s.List()
	t.Logf("journal peak %.1f MiB, %d runs kept of %d", float64(peak)/(1<<20), len(kept), runs)
	require.NotEmpty(t, kept)
	assert.Less(t, len(kept), DefaultCapacity, "1 MiB outputs: the bytes bound the runs kept, not the count")
	for i, e := range kept {
		assert.Equal(t, fmt.Sprintf("run-%03d", runs-1-i), e.ID, "the newest runs are kept")
		assert.Equal(t, runOutput(1<<20, runs-1-i), e.Output, "a 1 MiB output fits the default entry cap whole")
	}

	// The same caps hold after a restart.
	require.NoError(t, s.Close())
	again, err := Open(path, Options{})
	require.NoError(t, err)
	defer again.Close()
	assert.Len(t, again.List(), len(kept))
}

// An entry over EntryCap is stored cut to fit, its output's head and tail
// kept; one whose output escapes to six bytes a byte too. A live run is
// never evicted to make room, and an ID past MaxIDBytes is refused.
func TestEntryCapCutsTheOutputInTheMiddle(t *testing.T) {
	testenv.CheckGoroutines(t)
	path := filepath.Join(t.TempDir(), "history.jsonl")
	s, err := Open(path, Options{EntryCap: MinEntryCap, MaxBytes: 4 * MinEntryCap})
	require.NoError(t, err)
	defer s.Close()

	out := "FIRST LINE\n" + runOutput(1<<20, 0) + "LAST LINE\n"
	e := fullEntry("big", t0)
	e.Output, e.OutputTruncated = out, false
	require.NoError(t, s.Put(e))
	got, ok := s.Get("big")
	require.True(t, ok)
	assert.True(t, strings.HasPrefix(got.Output, "FIRST LINE\n"), "the head is kept")
	assert.True(t, strings.HasSuffix(got.Output, "LAST LINE\n"), "the tail is kept")
	assert.Contains(t, got.Output, " bytes omitted …\n")
	assert.True(t, got.OutputTruncated)
	assert.Equal(t, want(t, fullEntry("big", t0)).Actions, got.Actions, "a cut output was enough: the rest is whole")

	ctl := fullEntry("control", t0.Add(time.Second))
	ctl.Output = strings.Repeat("\x01", 1<<20) // \u0001 in JSON: 6 bytes each
	require.NoError(t, s.Put(ctl))

	live := Entry{ID: "live", State: StateRunning, Start: t0.Add(-time.Hour)}
	require.NoError(t, s.Put(live))
	for i := range 20 {
		e := fullEntry(fmt.Sprintf("later-%d", i), t0.Add(time.Duration(i+2)*time.Second))
		e.Output = runOutput(1<<20, i)
		require.NoError(t, s.Put(e))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.LessOrEqual(t, fi.Size(), int64(4*MinEntryCap))
	}
	for i, n := range journalLines(t, path) {
		assert.LessOrEqual(t, n, MinEntryCap, "line %d", i+1)
	}
	_, ok = s.Get("live")
	assert.True(t, ok, "a live run is never evicted, however old")

	err = s.Put(Entry{ID: strings.Repeat("x", MaxIDBytes+1), State: StateQueued})
	assert.ErrorIs(t, err, ErrInvalidEntry)
}
