package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/history"
)

func TestActionLogIsBounded(t *testing.T) {
	r := &Run{}
	for i := 0; i < MaxActions+500; i++ {
		r.recordAction(history.Action{At: time.Now(), Method: "evaluate", Outcome: "ok"})
	}
	if len(r.entry.Actions) != MaxActions {
		t.Fatalf("kept %d actions, want %d", len(r.entry.Actions), MaxActions)
	}
	last := r.entry.Actions[MaxActions-1]
	if want := "501 more actions not kept"; last.Outcome != want || last.Method != "…" {
		t.Fatalf("last entry %+v, want outcome %q", last, want)
	}
	if r.entry.Actions[MaxActions-2].Method != "evaluate" {
		t.Fatal("the actions before the summary are kept as they were")
	}
}

// TestStuckCallsNameTheirEntry: a call still inside the gate is named by
// the function that let it in, so the warning of a call that outlived its
// cancel says which host method it was.
func TestStuckCallsNameTheirEntry(t *testing.T) {
	r := &Run{}
	r.gate.init()
	_, leave, err := r.enter(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	got := r.gate.stuckCalls()
	if len(got) != 1 || !strings.HasSuffix(got[0], "TestStuckCallsNameTheirEntry") {
		t.Fatalf("stuck calls %q, want this test's function", got)
	}
	r.cutCalls()
	if len(r.gate.stuckCalls()) != 1 {
		t.Fatal("a cut call is still inside until it leaves")
	}
	leave()
	if got := r.gate.stuckCalls(); len(got) != 0 {
		t.Fatalf("after leave: %q", got)
	}
}

// probeAPI stands for a host method that enters the gate through helpers
// of its own, as every host call does (invoke, and act or read).
type probeAPI struct{ r *Run }

func (a *probeAPI) Stuck(ctx context.Context) (func(), error) { return a.via(ctx) }

// via is not inlined, as invoke and act may not be.
//
//go:noinline
func (a *probeAPI) via(ctx context.Context) (func(), error) {
	_, leave, err := a.r.enter(ctx, "")
	return leave, err
}

// A call that entered through helpers is named by the host method that
// made it, not by the helper that called enter.
func TestStuckCallsNameTheHostMethod(t *testing.T) {
	r := &Run{}
	r.gate.init()
	leave, err := (&probeAPI{r}).Stuck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	if got := r.gate.stuckCalls(); len(got) != 1 || !strings.HasSuffix(got[0], "(*probeAPI).Stuck") {
		t.Fatalf("stuck calls %q, want the host method (*probeAPI).Stuck", got)
	}
}
