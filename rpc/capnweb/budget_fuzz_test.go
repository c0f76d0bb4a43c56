package capnweb

import (
	"context"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fuzzBudget is the memory budget of the sessions FuzzSessionBudget drives.
const fuzzBudget = 4 << 20

// fuzzHeapBound is how far the heap may grow while one program runs: a
// generous multiple of the budget (the count is an upper bound of what is
// built, and the Go collector runs late), and far below what the programs
// name, which is up to gigabytes.
const fuzzHeapBound = 32*fuzzBudget + 64<<20

// budgetProgram turns fuzz input into a sequence of frames: each byte
// chooses a message that pushes data or names earlier pushes in every way
// the protocol allows (import, pipeline, call arguments, remap captures,
// nested references, error props, resolutions), pulls or releases.
func budgetProgram(data []byte) []string {
	var out []string
	pushes := 0
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	id := func() int {
		if pushes == 0 {
			return 0
		}
		return 1 + next()%pushes
	}
	push := func(expr string) {
		out = append(out, `["push",`+expr+`]`)
		pushes++
	}
	for len(data) > 0 {
		switch next() % 12 {
		case 0:
			n := 1 + next()*100
			push(`[[` + refs(`"`+strings.Repeat("y", 50)+`"`, n) + `]]`)
		case 1:
			push(`[[` + refs(fmt.Sprintf(`["import",%d]`, id()), 1+next()) + `]]`)
		case 2:
			push(fmt.Sprintf(`["pipeline",%d,["%d"]]`, id(), next()%3))
		case 3:
			push(fmt.Sprintf(`["pipeline",0,["echo"],[[[%s]]]]`, refs(fmt.Sprintf(`["import",%d]`, id()), 1+next()%64)))
		case 4:
			target, capture := id(), id()
			body := `["import",-1]`
			if k := next() % 3; k == 1 {
				body = `[[` + refs(`["import",-1]`, 1+next()%16) + `]]`
			} else if k == 2 {
				body = `["pipeline",-1,["echo"],[["import",0]]]`
			}
			push(fmt.Sprintf(`["remap",%d,[],[["import",%d],["import",0]],[%s]]`, target, capture, body))
		case 5:
			if pushes > 0 {
				out = append(out, fmt.Sprintf(`["pull",%d]`, id()))
			}
		case 6:
			if pushes > 0 {
				out = append(out, fmt.Sprintf(`["release",%d,1]`, id()))
			}
		case 7:
			var b strings.Builder
			ref := fmt.Sprintf(`["import",%d]`, id())
			for i := range 1 + next() {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"k%d":%s`, i, ref)
			}
			push(`{` + b.String() + `}`)
		case 8:
			a := id()
			push(fmt.Sprintf(`[[["import",%d],["import",%d],{"x":["import",%d]}]]`, a, a, a))
		case 9:
			push(fmt.Sprintf(`["error","Error","m","",{"a":["import",%d],"b":[[["import",%d]]]}]`, id(), id()))
		case 10:
			push(fmt.Sprintf(`["pipeline",0,["callMeBack"],[["export",-%d],1]]`, 1+pushes))
			out = append(out, fmt.Sprintf(`["resolve",1,[[%s]]]`, refs(fmt.Sprintf(`["import",%d]`, id()), 1+next()%32)))
		case 11:
			push(`["pipeline",0,["add"],[1,2]]`)
		}
	}
	return out
}

// FuzzSessionBudget drives a server session with message sequences built
// from the input. Whatever they name, the session's accounted memory never
// exceeds its budget, the heap stays within fuzzHeapBound of where it
// started, and the session ends cleanly when closed.
func FuzzSessionBudget(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 255, 1, 0, 255},              // a big array, then 256 references to it
		{0, 255, 4, 0, 0, 0},             // .map() over it returning it
		{0, 255, 4, 0, 0, 1, 15},         // .map() building arrays of it
		{0, 255, 3, 0, 63, 5, 1},         // echo of 64 references, pulled
		{0, 100, 8, 0, 8, 1, 8, 2, 8, 3}, // nested references, doubling
		{0, 50, 6, 0, 0, 50, 6, 0, 0, 50, 11, 5, 0},
		{0, 255, 7, 0, 255},
		{0, 255, 9, 0, 0},
		{0, 255, 10, 0, 31},
		{0, 255, 2, 0, 0, 2, 0, 1, 2, 0, 2, 2, 0, 3},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256 {
			data = data[:256]
		}
		frames := budgetProgram(data)
		base := heapObjects()
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if h := heapObjects(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Microsecond):
				}
			}
		}()
		mine, peer := memPipe()
		s, err := NewSession(mine, &labAPI{Version: "1.0", events: make(chan string, 1024)},
			&Options{MaxMemory: fuzzBudget, MaxInFlight: 64, CloseTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		go func() {
			for {
				if _, err := peer.Recv(ctx); err != nil {
					return
				}
			}
		}()
		for _, fr := range frames {
			if peer.Send(ctx, []byte(fr)) != nil {
				break
			}
		}
		// A last call: once it is answered, or the session has ended,
		// every frame before it has been handled.
		final := `["push",["pipeline",0,["add"],[1,2]]]`
		if peer.Send(ctx, []byte(final)) == nil {
			select {
			case <-s.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		closeOrDump(t, s)
		cancel()
		peer.Close(nil)
		close(stop)
		<-sampled
		if m := s.Memory(); m.Peak > fuzzBudget {
			t.Fatalf("accounted memory peaked at %d, over the budget of %d", m.Peak, fuzzBudget)
		}
		if grown := int64(peak.Load()) - int64(base); grown > fuzzHeapBound {
			t.Fatalf("the heap grew by %d bytes, over %d (program of %d frames)", grown, fuzzHeapBound, len(frames))
		}
		noPackageGoroutines(t)
	})
}

// heapObjects is the heap in use by objects, read without stopping the
// world.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
