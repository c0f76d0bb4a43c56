package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tranquil/automation/mirror"
	"github.com/tranquil/automation/permissions"
)

// Errors of Manager.Sync.
var (
	// ErrNoMirrors: the manager has no Config.Mirrors.
	ErrNoMirrors = errors.New("runner: output mirrors are not enabled")
	// ErrMirrorNotApproved: the script's write= grants are not the ones
	// the user approved, so they are not copied anywhere.
	ErrMirrorNotApproved = errors.New("runner: the script's current permissions are not approved")
)

// mirrorSource is what a mirror copies for a script with header h.
func mirrorSource(script string, h *permissions.Header, trigger string) mirror.Source {
	src := mirror.Source{Script: script, ScriptDir: h.ScriptDir, Trigger: trigger}
	for _, w := range h.Write {
		src.WriteRoots = append(src.WriteRoots, w.Resolved)
	}
	return src
}

// mirrorOutputs copies a succeeded run's write= outputs to the script's
// mirror, if the host enabled mirrors and the user declared one. It runs
// after the process is gone and before the run is reported done, so a
// host that waited for the run sees the mirror's state already updated;
// a Close or kill in the meantime cancels the copy. A failure is recorded
// in the mirror's state and logged: it never changes the run's own state.
func (r *Run) mirrorOutputs(h *permissions.Header) {
	store := r.m.cfg.Mirrors
	if store == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Turns a kill (Close, revocation) into a cancelled copy; it ends when
	// this function returns.
	go func() {
		select {
		case <-r.killCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := store.Sync(ctx, mirrorSource(r.req.Script, h, "run "+r.id))
	switch {
	case errors.Is(err, mirror.ErrNoMirror):
	case err != nil:
		r.m.log.Warn("runner: mirroring the run's outputs", "run", r.id, "dest", res.Mirror.Dest, "error", err)
	case len(res.Skipped) > 0:
		r.m.log.Info("runner: mirror skipped files", "run", r.id, "dest", res.Mirror.Dest, "skipped", len(res.Skipped))
	}
}

// Sync copies script's write= outputs to its mirror now, as the end of a
// succeeded run does. The write= grants are taken from the script's header
// only when it is the one the user approved; otherwise Sync fails with
// ErrMirrorNotApproved and copies nothing, so an edited header cannot point
// a sync at files the user never agreed to expose. It fails with
// ErrNoMirrors when the manager has no Config.Mirrors and with
// mirror.ErrNoMirror when none is declared for the script; other failures
// are also recorded in the mirror's state.
func (m *Manager) Sync(ctx context.Context, script string) (mirror.Result, error) {
	if m.cfg.Mirrors == nil {
		return mirror.Result{}, ErrNoMirrors
	}
	script, err := filepath.Abs(script)
	if err != nil {
		return mirror.Result{}, fmt.Errorf("runner: %w", err)
	}
	if _, ok, err := m.cfg.Mirrors.Status(ctx, script); err != nil || !ok {
		return mirror.Result{}, cmp.Or(err, mirror.ErrNoMirror)
	}
	src, err := os.ReadFile(script)
	if err != nil {
		return mirror.Result{}, fmt.Errorf("runner: %w", err)
	}
	h, err := permissions.Parse(src, script)
	if err != nil {
		return mirror.Result{}, err
	}
	if len(h.Write) > 0 {
		a, ok, err := m.gate.Store().Get(ctx, script)
		if err != nil {
			return mirror.Result{}, err
		}
		if !ok || a.Header != h.Canonical() {
			return mirror.Result{}, fmt.Errorf("%w: %s", ErrMirrorNotApproved, script)
		}
	}
	return m.cfg.Mirrors.Sync(ctx, mirrorSource(script, h, "sync"))
}
