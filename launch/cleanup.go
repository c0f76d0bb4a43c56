package launch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cleanup step names, in the order they run.
const (
	StepConnection = "connection"
	StepProcess    = "process"
	StepPort       = "port"
	StepProfile    = "profile"
)

// Cleanup step outcomes.
const (
	StepOK      = "ok"
	StepSkipped = "skipped"
	StepFailed  = "failed"
)

// CleanupStep is the outcome of one step of a cleanup.
type CleanupStep struct {
	Name    string
	Outcome string
	Detail  string
}

// CleanupReport is the cleanup of one launch.
type CleanupReport struct {
	ID    string
	Owned bool
	Steps []CleanupStep
}

// OK reports whether no step failed.
func (r CleanupReport) OK() bool {
	return !slices.ContainsFunc(r.Steps, func(s CleanupStep) bool { return s.Outcome == StepFailed })
}

// CleanupError is a cleanup with failed steps. It matches ErrCleanupFailed.
type CleanupError struct{ Reports []CleanupReport }

func (e *CleanupError) Error() string {
	var parts []string
	for _, r := range e.Reports {
		for _, s := range r.Steps {
			if s.Outcome == StepFailed {
				parts = append(parts, fmt.Sprintf("%s %s: %s", r.ID, s.Name, s.Detail))
			}
		}
	}
	return "launch: cleanup incomplete: " + strings.Join(parts, "; ")
}

func (e *CleanupError) Unwrap() error { return ErrCleanupFailed }

// stopGrace is how long a launched process gets between SIGTERM and
// SIGKILL.
const stopGrace = 3 * time.Second

// Cleanup ends the launches named by ids, or all of them when ids is empty.
// For a launch it owns it (1) closes the connection, (2) sends SIGTERM and
// then SIGKILL to the process group, (3) checks that /json/version no longer
// answers on the port (skipped for a Chromium launch, which has no port),
// and (4) removes the profile directory; for an
// attachment it only closes the connection. Each step's outcome is
// reported. When a step fails, the error is a *CleanupError matching
// ErrCleanupFailed, the launch stays listed, and calling Cleanup again with
// the same ID is safe: steps already done succeed again without touching
// anything else. A process is never signalled after it has been reaped, so
// a recycled pid is safe.
func (l *Launcher) Cleanup(ctx context.Context, ids ...string) ([]CleanupReport, error) {
	insts, err := l.lookup(ids)
	if err != nil {
		return nil, err
	}
	reports := make([]CleanupReport, 0, len(insts))
	failed := false
	for _, inst := range insts {
		r := l.cleanup(ctx, inst)
		if r.OK() {
			l.mu.Lock()
			inst.cleaned = true
			l.order = slices.DeleteFunc(l.order, func(id string) bool { return id == inst.ID })
			l.mu.Unlock()
		} else {
			failed = true
		}
		reports = append(reports, r)
	}
	if failed {
		return reports, &CleanupError{Reports: reports}
	}
	return reports, nil
}

// Close cleans up every launch; it is Cleanup with no IDs, for defer.
func (l *Launcher) Close(ctx context.Context) error {
	_, err := l.Cleanup(ctx)
	return err
}

func (l *Launcher) cleanup(ctx context.Context, inst *Process) CleanupReport {
	r := CleanupReport{ID: inst.ID, Owned: inst.Owned}
	add := func(name, outcome, detail string) {
		r.Steps = append(r.Steps, CleanupStep{Name: name, Outcome: outcome, Detail: detail})
	}
	_ = inst.browser.Close()
	add(StepConnection, StepOK, "")
	if !inst.Owned {
		for _, s := range []string{StepProcess, StepPort, StepProfile} {
			add(s, StepSkipped, "not started by this launcher")
		}
		return r
	}

	p := inst
	if err := p.stop(stopGrace); err != nil {
		add(StepProcess, StepFailed, err.Error())
	} else {
		add(StepProcess, StepOK, "")
	}

	// The port is the browser's until the process is gone; once it is, a
	// listener there could only be a helper the group left behind.
	portFree := false
	deadline := time.Now().Add(2 * time.Second)
	for {
		if !portAnswers(ctx, inst.port) {
			portFree = true
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	switch {
	case inst.port == 0:
		add(StepPort, StepSkipped, "no debugging port: launched with a pipe")
	case portFree:
		add(StepPort, StepOK, "")
	default:
		add(StepPort, StepFailed, fmt.Sprintf("127.0.0.1:%d still answers /json/version", inst.port))
	}

	switch {
	case r.Steps[1].Outcome == StepFailed || !portFree:
		// Something of the launch still runs and may write to the profile.
		add(StepProfile, StepSkipped, "kept while the process or port is live")
	default:
		if err := p.removeProfile(); err != nil {
			add(StepProfile, StepFailed, err.Error())
		} else {
			add(StepProfile, StepOK, "")
		}
	}
	return r
}
