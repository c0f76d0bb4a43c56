package runner

import (
	"errors"
	"path/filepath"

	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/runner/internal/audit"
)

// startAudit is the run's report pipe (package audit), or nil when the
// run is not traced or no pipe can be made here (see audit.Supported).
// The run goes on either way: its trace is the host's, not part of its
// outcome. A nil pipe's Env and Stop work, and do nothing of the pipe's.
func (r *Run) startAudit(h *permissions.Header, args []string) *audit.Pipe {
	if r.trace == nil {
		return nil
	}
	a, err := audit.Start(filepath.Join(r.m.cfg.DataDir, "audit"), r.trace, audit.RulesFromArgs(args, h.ScriptDir))
	if err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			r.m.log.Warn("runner: recording the run's accesses", "run", r.id, "error", err)
		}
		return nil
	}
	return a
}
