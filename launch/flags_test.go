package launch

import (
	"slices"
	"testing"
)

// TestDefaultFlagsAreACopy: a caller that changes the flags it was given
// changes neither what the next caller gets nor what a launch passes.
func TestDefaultFlagsAreACopy(t *testing.T) {
	want := DefaultFlags()
	if !slices.Contains(want, "--no-first-run") || !slices.Contains(want, "--disable-background-networking") {
		t.Fatalf("DefaultFlags lacks the safe or the closed-network flags: %q", want)
	}
	got := DefaultFlags()
	got[0] = "--remote-allow-origins=*"
	_ = append(got[:1], "--changed") // writes into any spare capacity
	if again := DefaultFlags(); !slices.Equal(again, want) {
		t.Errorf("a caller's change reached the next call: %q", again)
	}
	args := chromiumArgs(true, nil)
	if slices.Contains(args, "--remote-allow-origins=*") || slices.Contains(args, "--changed") {
		t.Errorf("a caller's change reached the launch: %q", args)
	}
	if !slices.Contains(args, want[len(want)-1]) {
		t.Errorf("the launch lacks the default flags: %q", args)
	}
}
