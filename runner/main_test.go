package runner

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/leakcheck"
)

// leakGrace is how long the gate waits, after the last test, for
// goroutines and processes to wind down: a closed socket's reader or a
// killed child's waiter ends a moment after the test that ended it, and
// under -race on a busy machine that moment can reach seconds.
const leakGrace = 10 * time.Second

// leakPoll is how often the gate looks again within leakGrace: often
// enough to add little to a clean run, rarely enough not to slow what it
// waits for.
const leakPoll = 50 * time.Millisecond

// TestMain runs the package's tests and then fails the binary when any of
// them left something running: a goroutine of the module's code or of
// os/exec (a Cmd started and not waited for), or a deno process below
// this one. It also has os/exec panic on a Cmd that is collected without
// being waited for, except in a benchmark run: that check keeps a stack
// and a finalizer for every Cmd, which the soak benchmark's heap would
// count as the runner's.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Setenv("GODEBUG", strings.TrimPrefix(os.Getenv("GODEBUG")+",execwait=2", ","))
	}
	adoptOrphans()
	code := m.Run()
	if os.Getenv("RUNNER_HELPER_HOST") != "" {
		os.Exit(code) // a re-executed host, killed before it gets here
	}
	if err := checkLeftovers(); err != nil {
		fmt.Fprintf(os.Stderr, "runner tests left things running:\n%v\n", err)
		killLeftDeno()
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// checkLeftovers waits up to leakGrace for the tests' goroutines and
// processes to end, and describes those that do not.
func checkLeftovers() error {
	deadline := time.Now().Add(leakGrace)
	for {
		goroutines, procs := leakedGoroutines(), leftDeno()
		if len(goroutines) == 0 && len(procs) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, p := range procs {
				fmt.Fprintf(&b, "deno process %s\n", p)
			}
			for _, g := range goroutines {
				fmt.Fprintf(&b, "\n%s\n", g)
			}
			return fmt.Errorf("%d goroutines and %d deno processes after %s:\n%s", len(goroutines), len(procs), leakGrace, b.String())
		}
		time.Sleep(leakPoll)
	}
}

// leakedGoroutines returns the stacks of the goroutines, other than the
// caller's, that run or were started by the module's code or os/exec.
func leakedGoroutines() []string {
	var leaked []string
	for _, g := range leakcheck.Stacks() {
		if strings.Contains(g, "github.com/tranquil/automation/") || strings.Contains(g, "os/exec.") {
			leaked = append(leaked, g)
		}
	}
	return leaked
}
