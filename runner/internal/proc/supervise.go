package proc

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Stops is how a run asks for its child's stop; the run owns its
// channels and closes each at most once.
type Stops struct {
	// Cancel is closed when the run is cancelled: the protocol cancel,
	// then the grace, then SIGTERM. Nil: never.
	Cancel <-chan struct{}
	// Kill is closed when the run is killed: SIGKILL of the group at
	// once, grace or not. Nil: never.
	Kill <-chan struct{}
	// Grace is how long a cancelled script has after the protocol cancel
	// (runner.Config.CancelGrace); zero sends SIGTERM right after it.
	Grace time.Duration
	// Timeout bounds the run; zero means none (@timeout none).
	Timeout time.Duration
}

// Script is the script in the run, as a stop reaches it: the run supplies
// it (its session and the host calls under way are the run's).
type Script interface {
	// CancelReason says why the run was cancelled, once Stops.Cancel is
	// closed, and whether it was killed (then the grace is skipped).
	CancelReason() (reason string, killed bool)
	// ProtocolCancel returns the call that hands the script the protocol
	// cancel (its context.signal aborts with the reason), returning once
	// the script took it or ctx ended; nil while no session is attached.
	ProtocolCancel() func(ctx context.Context, reason string)
	// CutCalls cuts the script's host calls under way short.
	CutCalls()
}

// Supervise watches the started child c until it has exited, stopping it
// when stops says, and returns once it has exited and its output is
// drained. When the run timed out, it returns the reason ("timed out after
// 1m0s"). script is required once stops.Cancel can close. The goroutine
// it starts for the protocol cancel is its own: it has ended when
// Supervise returns.
func Supervise(c *Child, stops Stops, script Script) (expired string) {
	s := &supervisor{c: c, stops: stops, script: script}
	return s.run()
}

// supervisor is one Supervise.
type supervisor struct {
	c      *Child
	stops  Stops
	script Script
	calls  sync.WaitGroup // the protocol cancel in flight
}

func (s *supervisor) run() (expired string) {
	// The protocol cancel is a call into the script: it must not outlive
	// the run.
	ctx, cancel := context.WithCancel(context.Background())
	defer s.calls.Wait()
	defer cancel()
	var deadline <-chan time.Time
	if s.stops.Timeout > 0 {
		t := time.NewTimer(s.stops.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-s.c.Exited():
	case <-deadline:
		expired = fmt.Sprintf("timed out after %s", s.stops.Timeout)
		s.stop(ctx, expired, false)
	case <-s.stops.Cancel:
		reason, killed := s.script.CancelReason()
		s.stop(ctx, reason, killed)
	}
	return expired
}

// stop ends the child, and returns once it has exited: first the protocol
// cancel (the script's context.signal aborts with reason) and the grace,
// then SIGTERM to its process group, then, after Spec.KillGrace, SIGKILL
// (exec.Cmd.Cancel and exec.Cmd.WaitDelay; see Child). With now, or once
// the run is killed, it skips to SIGKILL of the group.
//
// Its worst case, from a cancel to an exited child whose output is
// drained, is
//
//	Stops.Grace + Spec.KillGrace
//
// since at the end of the WaitDelay the process is killed and its pipes
// are closed at once, even where a process that left the group still
// holds them. With now it is Spec.KillGrace: the group dies at once, and
// pipes such a process holds are read for at most the WaitDelay. A
// process the kernel cannot kill (stuck in the kernel) is waited for all
// the same.
func (s *supervisor) stop(ctx context.Context, reason string, now bool) {
	if !now {
		s.cancelScript(ctx, reason)
		grace := time.NewTimer(s.stops.Grace)
		defer grace.Stop()
		select {
		case <-s.c.Exited():
			return
		case <-grace.C:
			s.c.Terminate()
		case <-s.stops.Kill:
			now = true
		}
	}
	if !now {
		select {
		case <-s.c.Exited():
			return
		case <-s.stops.Kill:
		}
	}
	s.c.Kill()
	<-s.c.Exited()
}

// cutWait is how long the host calls under way wait for the script to
// take the protocol cancel before they are cut short anyway: the cancel
// goes first, so that context.signal has aborted when they fail, unless
// the script is too busy to take it.
const cutWait = 250 * time.Millisecond

// cancelScript sends the protocol cancel, if the script's session is
// attached, on a goroutine bounded by the grace and by ctx; then it cuts
// the script's host calls under way short (Script.CutCalls).
func (s *supervisor) cancelScript(ctx context.Context, reason string) {
	send := s.script.ProtocolCancel()
	if send == nil {
		s.script.CutCalls()
		return
	}
	cut := time.AfterFunc(min(cutWait, s.stops.Grace), s.script.CutCalls)
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		ctx, cancel := context.WithTimeout(ctx, s.stops.Grace)
		defer cancel()
		send(ctx, reason)
		if cut.Stop() {
			s.script.CutCalls()
		}
	}()
}
