package leakcheck

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Grace is how long Main waits for goroutines to end after the tests
// have returned: a session or server that was closed may still be
// finishing its goroutines.
const Grace = 5 * time.Second

// Main runs m and exits with its status or, when the tests passed but
// goroutines they started are still running after [Grace], with status 1
// once it has printed their stacks. Call it from TestMain:
//
//	func TestMain(m *testing.M) { leakcheck.Main(m) }
//
// A fuzzing run is not checked: the fuzzing engine keeps goroutines of
// its own, and its coordinator gives a worker little time to exit.
func Main(m *testing.M) { os.Exit(Wrap(m.Run)) }

// Wrap runs a TestMain's work (m.Run with the package's own setup and
// teardown around it) and returns its exit status, or 1 when it returned
// 0 but goroutines started meanwhile are still running after [Grace]; it
// prints their stacks then.
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Wrap(func() int { return run(m) })) }
func Wrap(run func() int) int {
	before := Snapshot()
	code := run()
	if code == 0 && !fuzzing() {
		if left := before.Since(Grace); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "leakcheck: %d goroutine(s) outlived the tests:\n\n%s\n", len(left), strings.Join(left, "\n\n"))
			fmt.Println("FAIL")
			code = 1
		}
	}
	return code
}

// Stacks returns the stack of every goroutine but the caller's, for a
// gate that picks the ones it cares about by what they run.
func Stacks() []string {
	self := current()
	var out []string
	for _, g := range dump() {
		if g.id != self {
			out = append(out, g.stack)
		}
	}
	return out
}

// fuzzing reports whether this process coordinates or runs a fuzzing
// run (go test -fuzz).
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

// A Set is the goroutines running at one moment, by ID.
type Set map[uint64]bool

// Snapshot returns the goroutines running now.
func Snapshot() Set {
	s := Set{}
	for _, g := range dump() {
		s[g.id] = true
	}
	return s
}

// Since returns the stacks of the goroutines running now that are not in
// s, other than the caller, waiting up to grace for them to end.
func (s Set) Since(grace time.Duration) []string {
	deadline := time.Now().Add(grace)
	for {
		left := s.newer()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s Set) newer() []string {
	self := current()
	var out []string
	for _, g := range dump() {
		if !s[g.id] && g.id != self {
			out = append(out, g.stack)
		}
	}
	return out
}

type goroutine struct {
	id    uint64
	stack string
}

// dump returns every goroutine's ID and stack.
func dump() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if id, ok := parseID(g); ok {
			out = append(out, goroutine{id: id, stack: string(g)})
		}
	}
	return out
}

// current returns the calling goroutine's ID.
func current() uint64 {
	var buf [64]byte
	id, _ := parseID(buf[:runtime.Stack(buf[:], false)])
	return id
}

// parseID reads the ID from a stack's header, "goroutine 7 [running]:".
func parseID(stack []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(stack, []byte("goroutine "))
	if !ok {
		return 0, false
	}
	i := bytes.IndexByte(rest, ' ')
	if i < 0 {
		return 0, false
	}
	id, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	return id, err == nil
}
