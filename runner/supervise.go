package runner

import (
	"context"

	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/runner/internal/proc"
)

// supervise watches the run's started child until it has exited and its
// output is drained (proc.Supervise), stopping it when the run is
// cancelled, killed or times out. When the run timed out, it returns the
// reason ("timed out after 1m0s").
//
// From a cancel to an exited child whose output is drained takes at most
//
//	Config.CancelGrace + Config.KillGrace   (DefaultCancelGrace + DefaultKillGrace = 3 s)
//
// and from a kill Config.KillGrace. The run is then settled: closing the
// tabs it opened takes at most releaseTimeout (10 s), so a cancelled run
// is Done within CancelGrace + KillGrace + releaseTimeout (13 s by
// default), a killed one within KillGrace + releaseTimeout, plus the
// history's writes (and, only while something other than the process
// still holds its connection, up to sessionEndWait, 2 s, for its session
// to end). A timed-out run's goroutine then notifies the host, within
// notifyTimeout (5 s) more.
func (r *Run) supervise(c *proc.Child, h *permissions.Header) (expired string) {
	stops := proc.Stops{Cancel: r.cancelCh, Kill: r.killCh, Grace: r.m.cfg.CancelGrace}
	if !h.NoTimeout {
		stops.Timeout = r.m.cfg.DefaultTimeout
		if h.TimeoutDeclared {
			stops.Timeout = h.Timeout
		}
	}
	return proc.Supervise(c, stops, runScript{r})
}

// runScript is the run's script as its supervisor reaches it.
type runScript struct{ r *Run }

func (s runScript) CancelReason() (string, bool) { return s.r.cancelReason(), s.r.isKilled() }

func (s runScript) ProtocolCancel() func(context.Context, string) {
	s.r.mu.Lock()
	sess := s.r.sess
	s.r.mu.Unlock()
	if sess == nil {
		return nil
	}
	return func(ctx context.Context, reason string) { sess.Main().CallMethod(ctx, "cancel", reason) }
}

func (s runScript) CutCalls() { s.r.cutCalls() }
