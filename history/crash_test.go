package history

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// The helper process is this test binary re-executed with these variables
// set. It writes runs in a loop and prints "done <id> <start>" after each
// final Put returns, so the parent knows which runs are finished.
const (
	helperEnv      = "HISTORY_TEST_HELPER" // the journal path
	helperPrefix   = "HISTORY_TEST_PREFIX"
	helperCapacity = "HISTORY_TEST_CAPACITY"
	helperCount    = "HISTORY_TEST_COUNT"   // runs to write, then exit 0; 0 = until killed
	helperRecover  = "HISTORY_TEST_RECOVER" // first mark live runs of a dead predecessor failed
)

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(helperMain(path))
	}
	os.Exit(m.Run())
}

func helperMain(path string) int {
	capacity, _ := strconv.Atoi(os.Getenv(helperCapacity))
	count, _ := strconv.Atoi(os.Getenv(helperCount))
	prefix := os.Getenv(helperPrefix)
	s, err := Open(path, Options{Capacity: capacity})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if os.Getenv(helperRecover) != "" {
		// What a runner does on start: a run left live by a dead host is over.
		for _, e := range s.List() {
			if !e.State.Terminal() {
				e.State, e.Reason = StateFailed, "host exited"
				if err := s.Put(e); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 2
				}
			}
		}
	}
	for i := 0; count == 0 || i < count; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		start := time.Now().UTC()
		final := crashEntry(id, start)
		for _, st := range []State{StateQueued, StateRunning} {
			e := final
			e.State, e.ExitCode, e.Output, e.Result = st, nil, "", nil
			if err := s.Put(e); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
		if err := s.Put(final); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Printf("done %s %d\n", id, start.UnixNano())
	}
	return 0
}

// crashEntry is the finished entry for id, derived from id alone so the
// parent can check it byte for byte. Outputs range up to 64 KiB so that
// kills land inside writes.
func crashEntry(id string, start time.Time) Entry {
	h := fnv.New32a()
	h.Write([]byte(id))
	n := int(h.Sum32() % (64 << 10))
	code := 0
	return Entry{
		ID: id, Kind: KindScript, Script: "/scripts/" + id + ".ts", Trigger: "test",
		State: StateSucceeded, ExitCode: &code,
		Start: start, End: start.Add(time.Millisecond), Duration: time.Millisecond,
		Output:      strings.Repeat("x", n) + "\n",
		Result:      []byte(`{"id":"` + id + `"}`),
		Actions:     []Action{{At: start, Method: "ui.notify", Outcome: "ok"}},
		Permissions: "// @permissions ui",
	}
}

type reported struct {
	id    string
	start time.Time
}

func startHelper(t *testing.T, path, prefix string, capacity, count int, recover bool) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		helperEnv+"="+path, helperPrefix+"="+prefix,
		helperCapacity+"="+strconv.Itoa(capacity), helperCount+"="+strconv.Itoa(count))
	if recover {
		cmd.Env = append(cmd.Env, helperRecover+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, bufio.NewScanner(out)
}

func parseDone(t *testing.T, line string) reported {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 3, "helper line %q", line)
	ns, err := strconv.ParseInt(f[2], 10, 64)
	require.NoError(t, err)
	return reported{f[1], time.Unix(0, ns).UTC()}
}

// checkFinished asserts that every reported run is present exactly, or was
// evicted legitimately: the Store is full and every finished run it holds
// is newer.
func checkFinished(t *testing.T, s *Store, capacity int, done []reported) {
	t.Helper()
	list := s.List()
	for _, r := range done {
		got, ok := s.Get(r.id)
		if ok {
			assert.Equal(t, want(t, crashEntry(r.id, r.start)), got, "finished run %s intact", r.id)
			continue
		}
		assert.GreaterOrEqual(t, len(list), capacity, "run %s missing from a Store that is not full", r.id)
		for _, e := range list {
			if e.State.Terminal() {
				assert.True(t, e.Start.After(r.start), "run %s missing but older %s kept", r.id, e.ID)
			}
		}
	}
}

func TestCrashMidWriteLosesNoFinishedRun(t *testing.T) {
	testenv.CheckGoroutines(t)
	const capacity, kills = 12, 40
	path := filepath.Join(t.TempDir(), "history.jsonl")
	// The seed is logged so a failing sequence of kills can be replayed:
	// CRASH_SEED=<seed> go test -run TestCrashMidWriteLosesNoFinishedRun ./history
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "CRASH_SEED")
	}
	t.Logf("seed %d (CRASH_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(1, seed))
	var done []reported
	torn := 0
	for k := range kills {
		cmd, sc := startHelper(t, path, fmt.Sprintf("k%02d-", k), capacity, 0, true)
		waitFor := 1 + rng.IntN(6)
		for n := 0; n < waitFor && sc.Scan(); n++ {
			done = append(done, parseDone(t, sc.Text()))
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Kill())
		// Lines printed before the kill landed are finished runs too.
		for sc.Scan() {
			done = append(done, parseDone(t, sc.Text()))
		}
		_ = cmd.Wait()

		data, err := os.ReadFile(path)
		require.NoError(t, err)
		d, err := decodeFile(data)
		require.NoError(t, err, "the file parses after kill %d", k)
		if d.size < len(data) {
			torn++
		}
		s, logs := open(t, path, capacity)
		checkFinished(t, s, capacity, done)
		assert.NotContains(t, logs.String(), "corrupt", "kill %d", k)
		require.NoError(t, s.Close())
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d kills, %d finished runs reported, %d kills left a torn last line", kills, len(done), torn)
	assert.Greater(t, len(done), kills, "the helpers made progress")
	aside, _ := filepath.Glob(path + ".corrupt-*")
	assert.Empty(t, aside)
}

func TestTwoProcessesShareTheFile(t *testing.T) {
	testenv.CheckGoroutines(t)
	const per = 25
	path := filepath.Join(t.TempDir(), "history.jsonl")
	type proc struct {
		cmd *exec.Cmd
		sc  *bufio.Scanner
	}
	var procs []proc
	for _, prefix := range []string{"a-", "b-"} {
		// Capacity 20 forces compactions while the other process appends.
		cmd, sc := startHelper(t, path, prefix, 20, per, false)
		procs = append(procs, proc{cmd, sc})
	}
	var done []reported
	for _, p := range procs {
		for p.sc.Scan() {
			done = append(done, parseDone(t, p.sc.Text()))
		}
		require.NoError(t, p.cmd.Wait())
	}
	require.Len(t, done, 2*per)
	s, logs := open(t, path, 20)
	checkFinished(t, s, 20, done)
	assert.Len(t, s.List(), 20)
	assert.Empty(t, logs.String())

	// With room for all, every run of both is there.
	path2 := filepath.Join(t.TempDir(), "history.jsonl")
	procs = procs[:0]
	for _, prefix := range []string{"a-", "b-"} {
		cmd, sc := startHelper(t, path2, prefix, 1000, per, false)
		procs = append(procs, proc{cmd, sc})
	}
	for _, p := range procs {
		for p.sc.Scan() {
		}
		require.NoError(t, p.cmd.Wait())
	}
	s2, _ := open(t, path2, 1000)
	assert.Len(t, s2.List(), 2*per)
}
