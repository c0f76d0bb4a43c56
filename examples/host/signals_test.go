package main

import (
	"bytes"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// neverEnds is a run that does not end when cancelled, as one whose
// consent prompt ignores the cancel.
type neverEnds struct {
	mu      sync.Mutex
	reasons []string
}

func (r *neverEnds) Done() <-chan struct{} { return nil }

func (r *neverEnds) Cancel(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reasons = append(r.reasons, reason)
}

// The first Ctrl-C or SIGTERM cancels the run; a second one stops waiting
// for a run that does not end.
func TestSecondSignalStopsWaiting(t *testing.T) {
	for _, sigs := range [][]os.Signal{
		{os.Interrupt, os.Interrupt},
		{syscall.SIGTERM, syscall.SIGTERM},
		{os.Interrupt, syscall.SIGTERM},
	} {
		var out bytes.Buffer
		h := &runHost{out: &out, errOut: &out}
		ch := make(chan os.Signal, 2)
		for _, s := range sigs {
			ch <- s
		}
		r := &neverEnds{}
		assert.False(t, h.awaitRun(r, ch), "%v", sigs)
		assert.Equal(t, []string{signalWords(sigs[0])}, r.reasons, "cancelled once")
		assert.Contains(t, out.String(), "cancelling the run")
		assert.Contains(t, out.String(), "exiting without waiting for the run to end")
	}
	// A run that ends needs one.
	var out bytes.Buffer
	h := &runHost{out: &out, errOut: &out}
	done := make(chan struct{})
	close(done)
	assert.True(t, h.awaitRun(endedRun(done), make(chan os.Signal)))
}

type endedRun chan struct{}

func (r endedRun) Done() <-chan struct{} { return r }
func (r endedRun) Cancel(string)         {}
