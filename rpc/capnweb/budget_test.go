package capnweb

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bigArray is a push of an array of n strings of 100 bytes: about n×120
// bytes of the budget, from a frame of about n×103 bytes.
func bigArray(n int) string {
	el := `"` + strings.Repeat("x", 100) + `"`
	return `["push",[[` + strings.TrimSuffix(strings.Repeat(el+",", n), ",") + `]]]`
}

// refs is n copies of ref, comma separated.
func refs(ref string, n int) string {
	return strings.TrimSuffix(strings.Repeat(ref+",", n), ",")
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// amplification is one way a few small frames name far more than they
// carry. Frame 1 is always a 4.6 MiB array (push ID 1).
var amplification = []struct {
	name   string
	frames []string
}{
	{"import in an array", []string{`["push",[[` + refs(`["import",1]`, 1000) + `]]]`}},
	{"import in an object", []string{`["push",{` + func() string {
		var b strings.Builder
		for i := range 1000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":["import",1]`, i)
		}
		return b.String()
	}() + `}]`}},
	{"pipeline reads held as pushes", func() []string {
		var out []string
		for range 1000 {
			out = append(out, `["push",["pipeline",1]]`)
		}
		return out
	}()},
	{"pipeline into call arguments", func() []string {
		var out []string
		for range 1000 {
			out = append(out, `["push",["pipeline",0,["echo"],[["import",1]]]]`)
		}
		return out
	}()},
	{"many references in one call", []string{`["push",["pipeline",0,["echo"],[[[` + refs(`["import",1]`, 1000) + `]]]]]`}},
	{"remap returning the capture", []string{`["push",["remap",1,[],[["import",1]],[["import",-1]]]]`}},
	{"remap building arrays of the capture", []string{`["push",["remap",1,[],[["import",1]],[[[` + refs(`["import",-1]`, 10) + `]]]]]`}},
	{"remap calling with the capture", []string{`["push",["remap",1,[],[["import",0]],[["pipeline",-1,["echo"],[["import",0]]]]]]`,
		`["push",["remap",1,[],[["import",1]],[["pipeline",0,[],[]]]]]`}},
	{"remap with many instructions per element", []string{`["push",["remap",1,[],[["import",1]],[` + refs(`["import",-1,["0"]]`, 200) + `]]]`}},
	{"a frame parsing past the budget", []string{`["push",[[` + refs(`["import",1,["39999"]]`, 200000) + `]]]`}},
	{"nested references doubling", func() []string {
		out := []string{}
		for i := 1; i <= 30; i++ {
			out = append(out, fmt.Sprintf(`["push",[[["import",%d],["import",%d]]]]`, i, i))
		}
		return out
	}()},
	{"error props naming the value", []string{`["push",["error","Error","m","",{` + func() string {
		var b strings.Builder
		for i := range 500 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":["import",1]`, i)
		}
		return b.String()
	}() + `}]]`}},
	{"pulled results of echo", func() []string {
		var out []string
		for i := range 200 {
			out = append(out, `["push",["pipeline",0,["echo"],[["import",1]]]]`, fmt.Sprintf(`["pull",%d]`, i+2))
		}
		return out
	}()},
	{"resolve naming the value", []string{
		`["push",["pipeline",0,["callMeBack"],[["export",-1],1]]]`,
		`["resolve",1,[[` + refs(`["import",1]`, 3) + `]]]`}},
}

// TestBudgetStopsAmplification sends each family of frames that name a
// large value many times. The session must end with ErrLimit, saying
// which budget, before the host builds what the frames name, and the heap
// must stay within a few budgets whatever the frames ask for.
func TestBudgetStopsAmplification(t *testing.T) {
	CheckLeaks(t)
	const budget = 16 << 20
	for _, c := range amplification {
		t.Run(c.name, func(t *testing.T) {
			before := heapInUse()
			mine, peer := memPipe()
			s, err := NewSession(mine, &labAPI{events: make(chan string, 16)}, &Options{MaxMemory: budget})
			require.NoError(t, err)
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			go func() {
				for _, f := range append([]string{bigArray(40000)}, c.frames...) {
					if peer.Send(ctx, []byte(f)) != nil {
						return
					}
				}
			}()
			start := time.Now()
			var abort string
			for abort == "" {
				got, err := peer.Recv(ctx)
				require.NoError(t, err, "the session never aborted")
				if strings.HasPrefix(string(got), `["abort",`) {
					abort = string(got)
				}
			}
			<-s.Done()
			// The work a frame costs is bounded by the budget too: every
			// step of it is counted before it is taken.
			require.Less(t, time.Since(start), 10*time.Second)
			require.ErrorIs(t, s.Err(), ErrLimit)
			require.Contains(t, abort, "memory budget of 16 MiB")
			var be *BudgetError
			require.ErrorAs(t, s.Err(), &be, "a budget's limit says which budget")
			require.EqualValues(t, budget, be.Budget)
			peak := s.Memory().Peak
			require.LessOrEqual(t, peak, int64(budget))
			grown := int64(heapInUse()) - int64(before)
			t.Logf("%s; accounted peak %s; heap %+d KiB", abort, byteSize(peak), grown>>10)
			s.Close()
			peer.Close(nil)
		})
	}
}

// TestBudgetGivenBack checks that what the peer releases is given back:
// pushing a large value and releasing it, many times over, and a benign
// call with a large argument never reach the budget.
func TestBudgetGivenBack(t *testing.T) {
	CheckLeaks(t)
	mine, peer := memPipe()
	s, err := NewSession(mine, &labAPI{events: make(chan string, 16)}, &Options{MaxMemory: 32 << 20})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	big := bigArray(40000)
	const rounds = 10 // 10 × 4.6 MiB pushed, each passed to a call: far past the budget
	for i := 1; i <= rounds; i++ {
		id := fmt.Sprint(2*i - 1)
		require.NoError(t, peer.Send(ctx, []byte(big)))
		require.NoError(t, peer.Send(ctx, []byte(`["push",["pipeline",0,["echo"],[["import",`+id+`]]]]`)))
		require.NoError(t, peer.Send(ctx, []byte(`["pull",`+fmt.Sprint(2*i)+`]`)))
		got, err := peer.Recv(ctx)
		require.NoError(t, err, "%v %+v", s.Err(), s.Memory())
		require.True(t, strings.HasPrefix(string(got), `["resolve",`+fmt.Sprint(2*i)+`,[["xxx`), "%.80s", got)
		require.NoError(t, peer.Send(ctx, []byte(`["release",`+id+`,1]`)))
		require.NoError(t, peer.Send(ctx, []byte(`["release",`+fmt.Sprint(2*i)+`,1]`)))
	}
	// A call on the reader after the last release: every release before
	// it has been handled.
	require.NoError(t, peer.Send(ctx, []byte(`["push",["pipeline",0,["add"],[1,2]]]`)))
	require.NoError(t, peer.Send(ctx, []byte(fmt.Sprintf(`["pull",%d]`, 2*rounds+1))))
	got, err := peer.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf(`["resolve",%d,3]`, 2*rounds+1), string(got))
	require.Eventually(t, func() bool { return s.Memory().Used <= 4*entryCost }, 5*time.Second, time.Millisecond,
		"the released pushes still count: %d bytes", s.Memory().Used)
	require.NoError(t, s.Err())
	require.Greater(t, s.Memory().Peak, int64(8<<20))
}

// TestBudgetDefaultAndOff checks the zero value and the opt-out.
func TestBudgetDefaultAndOff(t *testing.T) {
	CheckLeaks(t)
	a, _ := memPipe()
	s, err := NewSession(a, nil, nil)
	require.NoError(t, err)
	require.Equal(t, int64(DefaultMaxMemory), s.Memory().Budget)
	s.Close()
	b, _ := memPipe()
	s, err = NewSession(b, nil, &Options{MaxMemory: -1})
	require.NoError(t, err)
	require.Equal(t, int64(0), s.Memory().Budget)
	s.Close()
}

// TestTreeSizeStopsEarly checks that measuring a value that names far
// more than the limit costs no more than the limit: a DAG of 2^40 leaves.
func TestTreeSizeStopsEarly(t *testing.T) {
	v := any("leaf")
	for range 40 {
		v = []any{v, v}
	}
	start := time.Now()
	n := treeSize(v, 1<<20, 0, 1000)
	require.Greater(t, n, int64(1<<20))
	require.Less(t, time.Since(start), time.Second)
	require.Greater(t, treeSize(v, 1<<40, 0, 10), int64(1<<40), "deeper than the depth limit counts as too large")
}

// TestPanicEndsOnlyTheSession checks that a method panicking, or the
// session panicking while handling a frame, ends that session with an
// error and leaves the process and other sessions running.
func TestPanicEndsOnlyTheSession(t *testing.T) {
	CheckLeaks(t)
	var seen []any
	mine, peer := memPipe()
	s, err := NewSession(mine, &labAPI{events: make(chan string, 16)}, &Options{OnPanic: func(v any, _ []byte) { seen = append(seen, v) }})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A panic in the session's own code, simulated by a transport frame
	// the reader handles with a nil parser table entry.
	s.safely(ctx, func(context.Context) { panic("simulated") })
	<-s.Done()
	require.ErrorIs(t, s.Err(), ErrProtocol)
	require.Equal(t, []any{"simulated"}, seen)
	got, err := peer.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, `["abort",["error","Error","internal error"]]`, string(got))
}

// clobberAPI changes what it is given, as a Go method may.
type clobberAPI struct{}

func (clobberAPI) Clobber(v []any) int { v[0] = "clobbered"; return len(v) }

// TestSharedValuesStayPrivate checks the two halves of sharing settled
// values: references to one take no copy of it, and a method that changes
// its argument changes its own copy, never the value other references see.
func TestSharedValuesStayPrivate(t *testing.T) {
	CheckLeaks(t)
	mine, peer := memPipe()
	s, err := NewSession(mine, clobberAPI{}, &Options{MaxMemory: 64 << 20})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	send := func(f string) { require.NoError(t, peer.Send(ctx, []byte(f))) }
	recv := func() string {
		got, err := peer.Recv(ctx)
		require.NoError(t, err)
		return string(got)
	}

	send(bigArray(40000))
	send(`["push",["pipeline",0,["clobber"],[["import",1]]]]`)
	send(`["pull",2]`)
	require.Equal(t, `["resolve",2,40000]`, recv())
	send(`["push",["pipeline",1,["0"]]]`)
	send(`["pull",3]`)
	require.Equal(t, `["resolve",3,"`+strings.Repeat("x", 100)+`"]`, recv(), "the method's change reached the shared value")

	before := heapInUse()
	send(`["push",[[` + refs(`["import",1]`, 3) + `]]]`)
	send(`["push",["pipeline",0,["clobber"],[["import",1]]]]`) // a frame after the push: it has been handled
	send(`["pull",5]`)
	require.Equal(t, `["resolve",5,40000]`, recv())
	grown := int64(heapInUse()) - int64(before)
	used := s.Memory().Used
	t.Logf("three references: heap %+d KiB, counted %s", grown>>10, byteSize(used))
	require.Less(t, grown, int64(2<<20), "three references to a 4.6 MiB value copied it")
	require.Greater(t, used, int64(18<<20), "the references still count as large as what they name")
}
