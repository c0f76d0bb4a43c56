package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// logBuf is a concurrency-safe log sink for asserting warnings.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLogger() (*slog.Logger, *logBuf) {
	b := &logBuf{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

func open(t *testing.T, path string, capacity int) (*Store, *logBuf) {
	t.Helper()
	log, buf := newLogger()
	s, err := Open(path, Options{Capacity: capacity, Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, buf
}

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 123456789, time.UTC)

func fullEntry(id string, start time.Time) Entry {
	code := 1
	zone := time.FixedZone("CET", 3600)
	return Entry{
		ID: id, Kind: KindScript, Script: "/home/u/scripts/fill.ts", Trigger: "pane",
		State: StateFailed, ExitCode: &code, Signal: "", Reason: "uncaught error",
		Start: start.In(zone), End: start.Add(1500 * time.Millisecond), Duration: 1500 * time.Millisecond,
		Output:          "line one\n<b>&amp; ünïcödé 🎉\n\ttabs and \x00 nul\n",
		OutputTruncated: true,
		FirstError:      "error: Uncaught Error: boom at file:///home/u/scripts/fill.ts:3:7",
		// Spacing and escapes that encoding/json would rewrite.
		Result: json.RawMessage(`{ "b": [1, 2.50, "\u003c"],  "a" : null }`),
		Actions: []Action{
			{At: start.Add(10 * time.Millisecond), Method: "tab.fill", Target: "Email", Site: "https://example.test", Outcome: "ok"},
			{At: start.Add(20 * time.Millisecond), Method: "tab.click", Target: "button[type=submit]", Site: "https://example.test", Outcome: "error: not found"},
		},
		Permissions: "// @permissions tabs=active read=./data",
	}
}

// want is e as the Store keeps it.
func want(t *testing.T, e Entry) Entry {
	t.Helper()
	n, err := normalize(e)
	require.NoError(t, err)
	return n
}

func TestRoundTripSurvivesReopen(t *testing.T) {
	testenv.CheckGoroutines(t)
	path := filepath.Join(t.TempDir(), "sub", "history.jsonl")
	s, logs := open(t, path, 0)
	e := fullEntry("run-1", t0)
	require.NoError(t, s.Put(e))
	zero := 0
	minimal := Entry{ID: "run-2", State: StateSucceeded, ExitCode: &zero, Start: t0.Add(time.Second)}
	require.NoError(t, s.Put(minimal))

	got, ok := s.Get("run-1")
	require.True(t, ok)
	assert.Equal(t, want(t, e), got)
	assert.Equal(t, string(e.Result), string(got.Result), "result bytes kept verbatim")
	assert.Equal(t, time.UTC, got.Start.Location())
	require.NoError(t, s.Close())

	s2, _ := open(t, path, 0)
	got2, ok := s2.Get("run-1")
	require.True(t, ok)
	assert.Equal(t, got, got2, "identical after a restart")
	m, ok := s2.Get("run-2")
	require.True(t, ok)
	assert.Equal(t, KindScript, m.Kind, "empty kind stored as script")
	require.NotNil(t, m.ExitCode, "exit code 0 is not lost")
	assert.Equal(t, 0, *m.ExitCode)
	assert.Nil(t, m.Result)
	assert.Nil(t, m.Actions)
	assert.Empty(t, logs.String(), "a clean open logs nothing")

	fi, err := os.Stat(path)
	require.NoError(t, err)
	if os.PathSeparator == '/' {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
}

func TestPutReplacesByIDAndCopies(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "h"), 0)
	e := fullEntry("r", t0)
	e.State = StateRunning
	e.ExitCode = nil
	require.NoError(t, s.Put(e))
	e.Actions[0].Target = "changed after Put"
	got, _ := s.Get("r")
	assert.Equal(t, "Email", got.Actions[0].Target, "Put keeps a copy")
	got.Actions[0].Target = "changed after Get"
	got.Result[0] = 'X'
	again, _ := s.Get("r")
	assert.Equal(t, "Email", again.Actions[0].Target, "Get returns a copy")
	assert.Equal(t, byte('{'), again.Result[0])

	code := 0
	e.State, e.ExitCode = StateSucceeded, &code
	require.NoError(t, s.Put(e))
	assert.Len(t, s.List(), 1)
	got, _ = s.Get("r")
	assert.Equal(t, StateSucceeded, got.State)
}

func TestInvalidUTF8IsStableAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	s, _ := open(t, path, 0)
	e := Entry{ID: "r", State: StateFailed, Start: t0, Output: "bad \xff\xfe bytes", FirstError: "\xc3"}
	require.NoError(t, s.Put(e))
	before, _ := s.Get("r")
	assert.Equal(t, "bad \uFFFD bytes", before.Output)
	s2, _ := open(t, path, 0)
	after, _ := s2.Get("r")
	assert.Equal(t, before, after)
}

func TestPutRejectsInvalidEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	s, _ := open(t, path, 0)
	cases := map[string]Entry{
		"empty id":        {State: StateQueued},
		"unknown state":   {ID: "a", State: "paused"},
		"empty state":     {ID: "a"},
		"kind not a word": {ID: "a", State: StateQueued, Kind: "Cron Job"},
		"kind too long":   {ID: "a", State: StateQueued, Kind: Kind(strings.Repeat("k", maxKind+1))},
		"kind digit":      {ID: "a", State: StateQueued, Kind: "1run"},
		"result not json": {ID: "a", State: StateSucceeded, Result: json.RawMessage(`{"a":`)},
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			err := s.Put(e)
			require.ErrorIs(t, err, ErrInvalidEntry)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	assert.Empty(t, s.List(), "nothing stored")
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}

// The runs panel lists scripts and workflow runs together: a workflow
// run, or a host's own kind, is stored and read back as it was put.
func TestOtherKindsOfRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	s, _ := open(t, path, 0)
	for _, k := range []Kind{KindWorkflow, "import", "sync-job_2"} {
		e := Entry{ID: "r-" + string(k), Kind: k, Script: "nightly report", State: StateRunning, Start: t0}
		require.NoError(t, s.Put(e), k)
	}
	require.NoError(t, s.Put(Entry{ID: "r-script", State: StateSucceeded, Start: t0}))
	s2, _ := open(t, path, 0)
	kinds := map[string]Kind{}
	for _, e := range s2.List() {
		kinds[e.ID] = e.Kind
	}
	assert.Equal(t, map[string]Kind{"r-workflow": KindWorkflow, "r-import": "import", "r-sync-job_2": "sync-job_2", "r-script": KindScript}, kinds)
}

func TestListNewestFirst(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "h"), 0)
	for _, i := range []int{3, 1, 4, 0, 2} {
		require.NoError(t, s.Put(Entry{ID: fmt.Sprint("r", i), State: StateSucceeded, Start: t0.Add(time.Duration(i) * time.Minute)}))
	}
	// Equal starts order by ID, descending, so the order is total.
	require.NoError(t, s.Put(Entry{ID: "r2b", State: StateSucceeded, Start: t0.Add(2 * time.Minute)}))
	var ids []string
	for _, e := range s.List() {
		ids = append(ids, e.ID)
	}
	assert.Equal(t, []string{"r4", "r3", "r2b", "r2", "r1", "r0"}, ids)
}

func TestCapacityEvictsOldestFinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	s, _ := open(t, path, 3)
	put := func(id string, minute int, st State) {
		t.Helper()
		require.NoError(t, s.Put(Entry{ID: id, State: st, Start: t0.Add(time.Duration(minute) * time.Minute)}))
	}
	put("live-old", 0, StateRunning) // oldest, but live: never evicted
	put("a", 1, StateSucceeded)
	put("b", 2, StateFailed)
	put("c", 3, StateSucceeded) // evicts a
	put("d", 4, StateCancelled) // evicts b
	ids := func(s *Store) []string {
		var out []string
		for _, e := range s.List() {
			out = append(out, e.ID)
		}
		return out
	}
	assert.Equal(t, []string{"d", "c", "live-old"}, ids(s))
	put("old-late", -5, StateSucceeded) // older than everything kept: evicted at once
	assert.Equal(t, []string{"d", "c", "live-old"}, ids(s))
	put("live-old", 0, StateSucceeded) // now finished and oldest
	put("e", 5, StateSucceeded)
	assert.Equal(t, []string{"e", "d", "c"}, ids(s))

	// The file replays to the same set.
	s2, _ := open(t, path, 3)
	assert.Equal(t, ids(s), ids(s2))

	// Live runs beyond capacity are kept until they finish.
	for i := range 5 {
		put(fmt.Sprint("q", i), 10+i, StateQueued)
	}
	assert.Len(t, s.List(), 5)
}

func TestCompactionKeepsFileBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	s, _ := open(t, path, 4)
	for i := range 50 {
		for _, st := range []State{StateQueued, StateRunning, StateSucceeded} {
			require.NoError(t, s.Put(Entry{ID: fmt.Sprint("r", i), State: st, Start: t0.Add(time.Duration(i) * time.Second)}))
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := bytes.Count(data, []byte("\n"))
		assert.LessOrEqual(t, lines, 1+2*4, "header plus at most 2×capacity entry lines")
	}
	list := s.List()
	require.Len(t, list, 4)
	assert.Equal(t, "r49", list[0].ID)
	s2, _ := open(t, path, 4)
	assert.Equal(t, list, s2.List())
	tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".h.tmp-*"))
	assert.Empty(t, tmp, "no temporary files left")
}

func TestSubscribe(t *testing.T) {
	testenv.CheckGoroutines(t)
	s, _ := open(t, filepath.Join(t.TempDir(), "h"), 0)
	var got []Entry
	var listed int
	cancel := s.Subscribe(func(e Entry) {
		got = append(got, e)
		listed = len(s.List()) // subscribers may read the Store
	})
	var other int
	cancel2 := s.Subscribe(func(Entry) { other++ })
	e := fullEntry("r", t0)
	e.State = StateRunning
	require.NoError(t, s.Put(e))
	e.State = StateSucceeded
	require.NoError(t, s.Put(e))
	require.Len(t, got, 2)
	assert.Equal(t, StateRunning, got[0].State)
	assert.Equal(t, want(t, e), got[1])
	assert.Equal(t, 1, listed, "the entry is stored before subscribers run")

	require.ErrorIs(t, s.Put(Entry{}), ErrInvalidEntry)
	assert.Len(t, got, 2, "a failed Put notifies nobody")

	cancel()
	cancel() // idempotent
	require.NoError(t, s.Put(Entry{ID: "x", State: StateQueued}))
	assert.Len(t, got, 2, "cancelled subscriber not called")
	assert.Equal(t, 3, other)
	cancel2()
}

func TestSubscribeOrderUnderConcurrentPuts(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "h"), 1000)
	var mu sync.Mutex
	var seen []string
	s.Subscribe(func(e Entry) {
		mu.Lock()
		seen = append(seen, e.ID)
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				assert.NoError(t, s.Put(Entry{ID: fmt.Sprintf("g%d-%d", g, i), State: StateQueued}))
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, 40)
	// Order of notifications is the order of lines in the journal.
	data, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	d, err := decodeFile(data)
	require.NoError(t, err)
	var fileOrder []string
	for _, e := range d.records {
		fileOrder = append(fileOrder, e.ID)
	}
	assert.Equal(t, fileOrder, seen)
}

func TestSubscriberMayReadDuringConcurrentPuts(t *testing.T) {
	testenv.CheckGoroutines(t)
	s, _ := open(t, filepath.Join(t.TempDir(), "h"), 1000)
	var calls int
	s.Subscribe(func(e Entry) {
		calls++ // turns serialise subscribers: no lock needed
		got, ok := s.Get(e.ID)
		assert.True(t, ok)
		assert.Equal(t, e.ID, got.ID)
		_ = s.List()
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 15 {
					assert.NoError(t, s.Put(Entry{ID: fmt.Sprintf("g%d-%d", g, i), State: StateQueued}))
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Puts deadlocked with a subscriber reading the Store")
	}
	assert.Equal(t, 60, calls)
}

func TestCloseRefusesPut(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "h"), 0)
	require.NoError(t, s.Put(Entry{ID: "a", State: StateQueued}))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Put(Entry{ID: "b", State: StateQueued}), ErrClosed)
	_, ok := s.Get("a")
	assert.True(t, ok, "reads still work")
}

func TestCorruptFileMovedAside(t *testing.T) {
	valid, err := encodeFile("0123456789abcdef", []Entry{want(t, fullEntry("kept", t0))})
	require.NoError(t, err)
	lines := strings.SplitAfter(string(valid), "\n")
	flip := bytes.Clone(valid)
	flip[len(lines[0])+40] ^= 0x01 // inside the entry's JSON
	newer := string(frame([]byte(`{"format":"tranquil-history","version":2,"generation":"0123456789abcdef"}`)))

	corruptions := map[string]string{
		"binary garbage":           "\x89PNG\r\n\x1a\n\x00\x00garbage",
		"json but not a journal":   `{"runs":[]}` + "\n",
		"no header newline":        `tranquil-history`,
		"bit flip in an entry":     string(flip),
		"newer version header":     newer + lines[1],
		"garbage line in middle":   lines[0] + "hello world\n" + lines[1],
		"unterminated garbage":     string(valid) + "not a torn line",
		"valid crc, bad entry":     lines[0] + string(frame([]byte(`{"id":"x","state":"exploded"}`))),
		"valid crc, not json":      lines[0] + string(frame([]byte(`{{{`))),
		"entry line before header": lines[1] + lines[0],
	}
	// Entry lines that still decode are kept: one bad line does not hide
	// the runs around it.
	salvaged := map[string]bool{"garbage line in middle": true, "unterminated garbage": true, "entry line before header": true}
	for name, content := range corruptions {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			s, logs := open(t, path, 0)
			var kept []string
			if salvaged[name] {
				kept = []string{"kept"}
			}
			assert.Equal(t, kept, ids(s.List()), "keeps what still reads")
			assert.Contains(t, logs.String(), "moved it aside")
			assert.Contains(t, logs.String(), "corrupt")
			aside, err := filepath.Glob(path + ".corrupt-*")
			require.NoError(t, err)
			require.Len(t, aside, 1)
			whole, err := os.ReadFile(aside[0])
			require.NoError(t, err)
			assert.Equal(t, content, string(whole), "the corrupt file is kept, not lost")

			s1, logs1 := open(t, path, 0)
			assert.Equal(t, kept, ids(s1.List()), "what was kept is on disk already")
			assert.Empty(t, logs1.String())

			require.NoError(t, s.Put(Entry{ID: "new", State: StateQueued}))
			s2, logs2 := open(t, path, 0)
			assert.Equal(t, append(kept, "new"), ids(s2.List()), "newest first; new has no start")
			assert.Empty(t, logs2.String())
		})
	}
}

func ids(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// A directory where the file should be is set aside, as the consent store
// does: the host still starts.
func TestDirectoryInPlaceOfTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Join(path, "inside"), 0o700))
	s, logs := open(t, path, 0)
	assert.Empty(t, s.List())
	assert.Contains(t, logs.String(), "moved it aside")
	aside, err := filepath.Glob(path + ".corrupt-*")
	require.NoError(t, err)
	require.Len(t, aside, 1)
	_, err = os.Stat(filepath.Join(aside[0], "inside"))
	assert.NoError(t, err, "the directory is kept whole")
	require.NoError(t, s.Put(Entry{ID: "a", State: StateSucceeded}))
	s2, _ := open(t, path, 0)
	assert.Equal(t, []string{"a"}, ids(s2.List()))
}

func TestTornLastWriteIgnored(t *testing.T) {
	e1, e2 := want(t, fullEntry("one", t0)), want(t, fullEntry("two", t0.Add(time.Second)))
	whole, err := encodeFile("0123456789abcdef", []Entry{e1})
	require.NoError(t, err)
	line2, err := encodeEntry(e2)
	require.NoError(t, err)
	// Every cut of the last line, plus zeros a crash may leave.
	cuts := map[string][]byte{"zeros": append(bytes.Clone(whole), make([]byte, 4096)...)}
	for _, n := range []int{1, 5, 8, 9, 10, len(line2) / 2, len(line2) - 2, len(line2) - 1} {
		cuts[fmt.Sprint("cut at ", n)] = append(bytes.Clone(whole), line2[:n]...)
	}
	for name, content := range cuts {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h")
			require.NoError(t, os.WriteFile(path, content, 0o600))
			s, logs := open(t, path, 0)
			list := s.List()
			require.Len(t, list, 1)
			assert.Equal(t, e1, list[0])
			assert.NotContains(t, logs.String(), "corrupt")
			aside, _ := filepath.Glob(path + ".corrupt-*")
			assert.Empty(t, aside)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, whole, data, "the writer that opened cut the torn line off")

			// The next append lands on a line boundary.
			require.NoError(t, s.Put(e2))
			s2, _ := open(t, path, 0)
			assert.Equal(t, []Entry{e2, e1}, s2.List())
		})
	}
}

func TestEmptyFileIsEmptyHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	s, logs := open(t, path, 0)
	assert.Empty(t, s.List())
	assert.Empty(t, logs.String())
	require.NoError(t, s.Put(Entry{ID: "a", State: StateQueued}))
	s2, _ := open(t, path, 0)
	assert.Len(t, s2.List(), 1)
}

func TestStoresShareOneFile(t *testing.T) {
	testenv.CheckGoroutines(t)
	path := filepath.Join(t.TempDir(), "h")
	a, _ := open(t, path, 50)
	b, _ := open(t, path, 50)
	var wg sync.WaitGroup
	for g, s := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for i := range 40 { // enough to compact several times
				assert.NoError(t, s.Put(Entry{ID: fmt.Sprintf("s%d-%d", g, i), State: StateSucceeded, Start: t0.Add(time.Duration(i*4+g) * time.Second)}))
			}
		})
	}
	wg.Wait()
	la, lb := a.List(), b.List()
	require.Len(t, la, 50)
	assert.Equal(t, la, lb, "each Store sees the other's writes")
	assert.Equal(t, "s3-39", la[0].ID)
	c, logs := open(t, path, 50)
	assert.Equal(t, la, c.List())
	assert.Empty(t, logs.String())
}

func TestCorruptionFoundLaterKeepsKnownRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	s, logs := open(t, path, 0)
	require.NoError(t, s.Put(Entry{ID: "a", State: StateSucceeded, Start: t0}))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("scribbled by something else\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	// A reader does not move the file (it holds no lock), it warns.
	assert.Len(t, s.List(), 1)
	assert.Contains(t, logs.String(), "could not read")
	// The next writer moves it aside and rewrites what it knew.
	require.NoError(t, s.Put(Entry{ID: "b", State: StateSucceeded, Start: t0.Add(time.Second)}))
	assert.Contains(t, logs.String(), "moved it aside")
	s2, _ := open(t, path, 0)
	assert.Len(t, s2.List(), 2)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, err := Open(filepath.Join(blocker, "h"), Options{})
	require.Error(t, err, "a parent that is a file")
	// A directory where the file should be is set aside instead: see
	// TestDirectoryInPlaceOfTheFile.
}

// fullDisk makes every write of the history file past limit bytes fail
// as a full disk does, for the test's duration.
func fullDisk(t *testing.T, limit int64) {
	t.Helper()
	testWriteHook = func(_ string, off int64, n int) error {
		if off+int64(n) > limit {
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { testWriteHook = nil })
}

// A finished run whose entry does not fit on a full disk is stored with
// less, never left live or lost: the early, small writes fit, the last
// (with the output) would not.
func TestFullDiskKeepsTheOutcome(t *testing.T) {
	big := strings.Repeat("output line\n", 20000) // 240 KB
	for name, tc := range map[string]struct {
		limit      int64
		wantOutput func(t *testing.T, out string)
		wantResult bool
	}{
		"room for the tail": {64 << 10, func(t *testing.T, out string) {
			assert.True(t, strings.HasPrefix(out, "[output before this not stored"), out[:80])
			assert.True(t, strings.HasSuffix(out, "output line\n"))
			assert.Less(t, len(out), 10<<10)
		}, true},
		"room for the outcome only": {3 << 10, func(t *testing.T, out string) {
			assert.Equal(t, "[output not stored: there was no room for it]\n", out)
		}, true},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			s, _ := open(t, path, 0)
			fullDisk(t, tc.limit)
			e := Entry{ID: "r", State: StateRunning, Start: t0, Permissions: "none"}
			require.NoError(t, s.Put(e), "the small early writes fit")
			code := 0
			e.State, e.End, e.ExitCode, e.Output, e.Result = StateSucceeded, t0.Add(time.Second), &code, big, json.RawMessage(`"done"`)
			err := s.Put(e)
			require.ErrorIs(t, err, ErrTrimmed)
			assert.ErrorIs(t, err, syscall.ENOSPC, "it says why")
			for _, st := range []*Store{s, func() *Store { s2, _ := open(t, path, 0); return s2 }()} {
				got, ok := st.Get("r")
				require.True(t, ok)
				assert.Equal(t, StateSucceeded, got.State)
				require.NotNil(t, got.ExitCode)
				assert.True(t, got.OutputTruncated)
				tc.wantOutput(t, got.Output)
				assert.JSONEq(t, `"done"`, string(got.Result))
			}
		})
	}
	t.Run("no room at all", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "history.jsonl")
		s, _ := open(t, path, 0)
		require.NoError(t, s.Put(Entry{ID: "r", State: StateRunning, Start: t0}))
		fullDisk(t, 0)
		err := s.Put(Entry{ID: "r", State: StateSucceeded, Start: t0, Output: big})
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrTrimmed)
		got, _ := s.Get("r")
		assert.Equal(t, StateRunning, got.State, "what Get says is what is stored")
	})
}

// The whole-file rewrite needs room for a second copy; when there is none,
// the entry is appended instead.
func TestFullDiskAppendsWhenTheRewriteDoesNotFit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	s, _ := open(t, path, 2)
	for i := range 4 {
		require.NoError(t, s.Put(Entry{ID: fmt.Sprint(i), State: StateSucceeded, Start: t0.Add(time.Duration(i) * time.Second)}))
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	testWriteHook = func(_ string, off int64, n int) error {
		if off == 0 {
			return syscall.ENOSPC // every rewrite
		}
		return nil
	}
	t.Cleanup(func() { testWriteHook = nil })
	require.NoError(t, s.Put(Entry{ID: "next", State: StateSucceeded, Start: t0.Add(time.Minute)}))
	fi2, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, fi2.Size(), fi.Size(), "appended")
	s2, _ := open(t, path, 2)
	assert.Equal(t, "next", s2.List()[0].ID)
}
