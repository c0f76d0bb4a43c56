package launch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
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
// SIGKILL when the cleanup budget leaves that much; less otherwise.
const stopGrace = 3 * time.Second

// DefaultCleanupBudget is how long one Cleanup may take in all, every
// launch and step of it together, unless LauncherOptions.CleanupBudget or
// the context's deadline says otherwise.
const DefaultCleanupBudget = 5 * time.Second

// killedLook is how long a process killed after the budget ran out is
// waited for: enough for the kernel to reap it, so a cleanup whose
// context was cancelled still reports the common case as done.
const killedLook = 200 * time.Millisecond

// Cleanup ends the launches named by ids, or all of them when ids is empty.
// For a launch it owns it (1) closes the connection, (2) sends SIGTERM and
// then SIGKILL to the process group, (3) checks that /json/version no longer
// answers on the port (skipped for a Chromium launch, which has no port),
// and (4) removes the profile directory; for an
// attachment it only closes the connection. Each step's outcome is
// reported.
//
// The whole call has one budget: LauncherOptions.CleanupBudget (5 s by
// default), or ctx's deadline when sooner. Launches are cleaned at the
// same time, so one stuck app does not hold up the others. The grace
// between SIGTERM and SIGKILL is 3 s, or half of what is left of the
// budget when that is less; once the budget is spent a process still
// running is killed at once, and a step that could not finish in time
// fails, saying so. A cancelled ctx spends the budget.
//
// When a step fails, the error is a *CleanupError matching
// ErrCleanupFailed, the launch stays listed, and calling Cleanup again with
// the same ID is safe: steps already done succeed again without touching
// anything else. A process is never signalled after it has been reaped, so
// a recycled pid is safe.
func (l *Launcher) Cleanup(ctx context.Context, ids ...string) ([]CleanupReport, error) {
	insts, err := l.lookup(ids)
	if err != nil {
		return nil, err
	}
	budget := l.opts.CleanupBudget
	if budget <= 0 {
		budget = DefaultCleanupBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	reports := make([]CleanupReport, len(insts))
	var wg sync.WaitGroup
	for i, inst := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = l.cleanup(ctx, inst)
		}()
	}
	wg.Wait()
	failed := false
	for i, r := range reports {
		if !r.OK() {
			failed = true
			continue
		}
		inst := insts[i]
		l.mu.Lock()
		inst.cleaned = true
		l.order = slices.DeleteFunc(l.order, func(id string) bool { return id == inst.ID })
		l.mu.Unlock()
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
	if err := p.stop(ctx); err != nil {
		add(StepProcess, StepFailed, err.Error())
	} else {
		add(StepProcess, StepOK, "")
	}

	// The port is the browser's until the process is gone; once it is, a
	// listener there could only be a helper the group left behind.
	portFree := inst.port == 0 || portFreed(ctx, inst.port)
	switch {
	case inst.port == 0:
		add(StepPort, StepSkipped, "no debugging port: launched with a pipe")
	case portFree:
		add(StepPort, StepOK, "")
	default:
		add(StepPort, StepFailed, fmt.Sprintf("127.0.0.1:%d still answers /json/version%s", inst.port, spent(ctx)))
	}

	switch {
	case r.Steps[1].Outcome == StepFailed || !portFree:
		// Something of the launch still runs and may write to the profile.
		add(StepProfile, StepSkipped, "kept while the process or port is live")
	default:
		if err := p.removeProfile(ctx); err != nil {
			add(StepProfile, StepFailed, err.Error())
		} else {
			add(StepProfile, StepOK, "")
		}
	}
	return r
}

// portFreed reports whether port stops answering /json/version within 2 s
// and the budget of ctx.
func portFreed(ctx context.Context, port int) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if !portAnswers(ctx, port) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// spent says, for a step's failure, that the cleanup budget ran out.
func spent(ctx context.Context) string {
	if ctx.Err() != nil {
		return " when the cleanup budget was spent"
	}
	return ""
}
