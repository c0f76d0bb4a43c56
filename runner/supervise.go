package runner

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// supervisor watches a run's started child until it has exited, stopping
// it when the run is cancelled, killed or times out.
type supervisor struct {
	r *Run
	c *child
	// grace is how long a cancelled script has after the protocol cancel
	// (Config.CancelGrace).
	grace time.Duration
	// timeout bounds the run; zero means none (@timeout none).
	timeout time.Duration
	calls   sync.WaitGroup // the protocol cancel in flight
}

// run returns once the child has exited and its output is drained. When
// the run timed out, it returns the reason ("timed out after 1m0s").
func (s *supervisor) run() (expired string) {
	// The protocol cancel is a call into the script: it must not outlive
	// the run.
	ctx, cancel := context.WithCancel(context.Background())
	defer s.calls.Wait()
	defer cancel()
	var deadline <-chan time.Time
	if s.timeout > 0 {
		t := time.NewTimer(s.timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-s.c.exited():
	case <-deadline:
		expired = fmt.Sprintf("timed out after %s", s.timeout)
		s.stop(ctx, expired, false)
	case <-s.r.cancelCh:
		s.stop(ctx, s.r.cancelReason(), s.r.isKilled())
	}
	return expired
}

// stop ends the child, and returns once it has exited: first the protocol
// cancel (the script's context.signal aborts with reason) and the grace,
// then SIGTERM to its process group, then, after Config.KillGrace, SIGKILL
// (exec.Cmd.Cancel and exec.Cmd.WaitDelay; see child). With now, or once
// the run is killed, it skips to SIGKILL of the group.
//
// Its worst case, from a cancel to an exited child whose output is
// drained, is
//
//	Config.CancelGrace + Config.KillGrace   (DefaultCancelGrace + DefaultKillGrace = 3 s)
//
// since at the end of the WaitDelay the process is killed and its pipes
// are closed at once, even where a process that left the group still
// holds them. With now it is Config.KillGrace: the group dies at once,
// and pipes such a process holds are read for at most the WaitDelay. The
// run is then settled: closing the tabs it opened takes at most
// releaseTimeout (10 s), so a cancelled run is Done within
// CancelGrace + KillGrace + releaseTimeout (13 s by default), a killed one
// within KillGrace + releaseTimeout, plus the history's writes (and, only
// while something other than the process still holds its connection, up
// to sessionEndWait, 2 s, for its session to end). A timed-out run's
// goroutine then notifies the host, within notifyTimeout (5 s) more. A
// process the kernel cannot kill (stuck in the kernel) is waited for all
// the same.
func (s *supervisor) stop(ctx context.Context, reason string, now bool) {
	if !now {
		s.cancelScript(ctx, reason)
		grace := time.NewTimer(s.grace)
		defer grace.Stop()
		select {
		case <-s.c.exited():
			return
		case <-grace.C:
			s.c.terminate()
		case <-s.r.killCh:
			now = true
		}
	}
	if !now {
		select {
		case <-s.c.exited():
			return
		case <-s.r.killCh:
		}
	}
	s.c.kill()
	<-s.c.exited()
}

// cutWait is how long the host calls under way wait for the script to
// take the protocol cancel before they are cut short anyway: the cancel
// goes first, so that context.signal has aborted when they fail, unless
// the script is too busy to take it.
const cutWait = 250 * time.Millisecond

// cancelScript sends the protocol cancel, if the script's session is
// attached, on a goroutine bounded by the grace and by ctx; then it cuts
// the script's host calls under way short (see Run.cutCalls).
func (s *supervisor) cancelScript(ctx context.Context, reason string) {
	s.r.mu.Lock()
	sess := s.r.sess
	s.r.mu.Unlock()
	if sess == nil {
		s.r.cutCalls()
		return
	}
	cut := time.AfterFunc(min(cutWait, s.grace), s.r.cutCalls)
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		ctx, cancel := context.WithTimeout(ctx, s.grace)
		defer cancel()
		sess.Main().CallMethod(ctx, "cancel", reason)
		if cut.Stop() {
			s.r.cutCalls()
		}
	}()
}
