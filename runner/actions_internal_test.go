package runner

import (
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
