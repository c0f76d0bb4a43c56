package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tranquil/automation/mirror"
	"github.com/tranquil/automation/runner"
)

const mirrorUsage = `usage: host mirror COMMAND
  set SCRIPT DIR           copy SCRIPT's write= outputs to DIR after every succeeded run
  status [--json] [SCRIPT] show every mirror, or the one that applies to SCRIPT
  remove SCRIPT            stop mirroring SCRIPT (files already copied stay)
  sync SCRIPT              copy SCRIPT's outputs now
`

func (a *app) mirror(ctx context.Context, args []string) int {
	sub := map[string]func(*app, context.Context, []string) int{
		"set":    (*app).mirrorSet,
		"status": (*app).mirrorStatus,
		"remove": (*app).mirrorRemove,
		"sync":   (*app).mirrorSync,
	}
	if len(args) == 0 {
		fmt.Fprint(a.stderr, mirrorUsage)
		return exitUsage
	}
	cmd, ok := sub[args[0]]
	if !ok {
		fmt.Fprintf(a.stderr, "unknown mirror command %q\n%s", args[0], mirrorUsage)
		return exitUsage
	}
	return cmd(a, ctx, args[1:])
}

// openMirrors opens the mirror declarations kept beside the approvals.
func (a *app) openMirrors() (*mirror.Store, error) {
	store, err := a.openConsent()
	if err != nil {
		return nil, err
	}
	return mirror.OpenBeside(store, mirror.Options{})
}

func (a *app) mirrorSet(ctx context.Context, args []string) int {
	fs := a.flags("mirror set")
	pos, ok := a.positional(fs, args, 2, "a SCRIPT and a DIR")
	if !ok {
		return exitUsage
	}
	script, err1 := filepath.Abs(pos[0])
	dest, err2 := filepath.Abs(pos[1])
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintf(a.stderr, "mirror set: %s\n", safe(err.Error()))
		return exitUsage
	}
	ms, err := a.openMirrors()
	if err != nil {
		fmt.Fprintf(a.stderr, "mirror set: %s\n", safe(err.Error()))
		return exitFailed
	}
	mi, err := ms.Set(ctx, mirror.ScopeScript, script, dest)
	if err != nil {
		fmt.Fprintln(a.stderr, safe(err.Error()))
		if errors.Is(err, mirror.ErrRefused) {
			return exitRefused
		}
		return exitFailed
	}
	fmt.Fprintf(a.stdout, "mirroring %s\n  to %s after every succeeded run (%s)\n", safe(mi.Key), safe(mi.Dest), safe(outcome(mi.State)))
	return exitOK
}

// mirrorOut is one mirror as status --json prints it.
type mirrorOut struct {
	Scope        mirror.Scope   `json:"scope"`
	Key          string         `json:"key"`
	Dest         string         `json:"dest"`
	DeclaredAt   time.Time      `json:"declaredAt"`
	Outcome      mirror.Outcome `json:"outcome"`
	Status       string         `json:"status"`
	LastSync     time.Time      `json:"lastSync,omitzero"`
	Trigger      string         `json:"trigger,omitempty"`
	Copied       int            `json:"copied"`
	Unchanged    int            `json:"unchanged"`
	Skipped      []mirror.Skip  `json:"skipped,omitempty"`
	SkippedTotal int            `json:"skippedTotal,omitempty"`
	LastError    string         `json:"lastError,omitempty"`
}

func toMirrorOut(m mirror.Mirror) mirrorOut {
	s := m.State
	return mirrorOut{
		Scope: m.Scope, Key: m.Key, Dest: m.Dest, DeclaredAt: m.DeclaredAt, Outcome: s.Outcome(), Status: outcome(s),
		LastSync: s.LastSync, Trigger: s.Trigger, Copied: s.Copied, Unchanged: s.Unchanged,
		Skipped: s.Skipped, SkippedTotal: s.SkippedTotal, LastError: s.LastError,
	}
}

func (a *app) mirrorStatus(ctx context.Context, args []string) int {
	fs := a.flags("mirror status")
	asJSON := fs.Bool("json", false, "print the mirrors as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 1 {
		fmt.Fprintln(a.stderr, "mirror status takes at most one SCRIPT")
		return exitUsage
	}
	ms, err := a.openMirrors()
	if err != nil {
		fmt.Fprintf(a.stderr, "mirror status: %s\n", safe(err.Error()))
		return exitFailed
	}
	var list []mirror.Mirror
	if len(pos) == 1 {
		mi, ok, err := ms.Status(ctx, pos[0])
		if err != nil {
			fmt.Fprintf(a.stderr, "mirror status: %s\n", safe(err.Error()))
			return exitFailed
		}
		if !ok {
			fmt.Fprintf(a.stderr, "no mirror applies to %s\n", safe(pos[0]))
			return exitFailed
		}
		list = []mirror.Mirror{mi}
	} else if list, err = ms.List(ctx); err != nil {
		fmt.Fprintf(a.stderr, "mirror status: %s\n", safe(err.Error()))
		return exitFailed
	}
	if *asJSON {
		outs := make([]mirrorOut, 0, len(list))
		for _, mi := range list {
			outs = append(outs, toMirrorOut(mi))
		}
		if err := printJSON(a.stdout, outs); err != nil {
			return exitFailed
		}
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stdout, "no mirrors")
	}
	for _, mi := range list {
		writeMirror(a.stdout, mi)
	}
	return exitOK
}

// writeMirror prints a mirror and what its last sync did.
func writeMirror(w io.Writer, mi mirror.Mirror) {
	what := mi.Key
	if mi.Scope == mirror.ScopeWorkspace {
		what = "workspace " + mi.Key
	}
	fmt.Fprintf(w, "mirror of %s\n  to:        %s\n  last sync: %s\n", safe(what), safe(mi.Dest), safe(outcome(mi.State)))
	s := mi.State
	if s.Outcome() != mirror.OutcomeNever && s.Unchanged > 0 {
		fmt.Fprintf(w, "  unchanged: %d\n", s.Unchanged)
	}
	if s.SkippedTotal > 0 {
		fmt.Fprintf(w, "  skipped:   %d\n", s.SkippedTotal)
		for _, sk := range s.Skipped {
			fmt.Fprintf(w, "    %s (%s)\n", safe(sk.Path), safe(string(sk.Reason)))
		}
		if more := s.SkippedTotal - len(s.Skipped); more > 0 {
			fmt.Fprintf(w, "    and %d more\n", more)
		}
	}
}

// outcome words a mirror's state; "never synced" and "nothing to copy"
// are different answers.
func outcome(s mirror.State) string {
	at := s.LastSync.Local().Format(time.DateTime)
	switch s.Outcome() {
	case mirror.OutcomeNever:
		return "never synced"
	case mirror.OutcomeNothing:
		return fmt.Sprintf("synced %s, nothing to copy", at)
	case mirror.OutcomeCopied:
		return fmt.Sprintf("copied %d at %s (%s)", s.Copied, at, s.Trigger)
	default:
		return "failed: " + s.LastError
	}
}

func (a *app) mirrorRemove(ctx context.Context, args []string) int {
	fs := a.flags("mirror remove")
	pos, ok := a.positional(fs, args, 1, "a SCRIPT")
	if !ok {
		return exitUsage
	}
	script, err := filepath.Abs(pos[0])
	if err != nil {
		fmt.Fprintf(a.stderr, "mirror remove: %s\n", safe(err.Error()))
		return exitUsage
	}
	ms, err := a.openMirrors()
	if err != nil {
		fmt.Fprintf(a.stderr, "mirror remove: %s\n", safe(err.Error()))
		return exitFailed
	}
	had, err := ms.Remove(ctx, mirror.ScopeScript, script)
	if err != nil {
		fmt.Fprintf(a.stderr, "mirror remove: %s\n", safe(err.Error()))
		return exitFailed
	}
	if !had {
		fmt.Fprintf(a.stderr, "%s had no mirror\n", safe(script))
		return exitFailed
	}
	fmt.Fprintf(a.stdout, "stopped mirroring %s; the files already copied stay where they are\n", safe(script))
	return exitOK
}

func (a *app) mirrorSync(ctx context.Context, args []string) int {
	fs := a.flags("mirror sync")
	denoFlag := fs.String("deno", "", "the deno executable")
	pos, ok := a.positional(fs, args, 1, "a SCRIPT")
	if !ok {
		return exitUsage
	}
	m, _, err := a.newManager(managerOptions{deno: *denoFlag})
	if err != nil {
		fmt.Fprintf(a.stderr, "mirror sync: %s\n", safe(err.Error()))
		return exitFailed
	}
	defer m.Close()
	res, err := m.Sync(ctx, pos[0])
	if res.Mirror.Dest != "" {
		writeMirror(a.stdout, res.Mirror)
		for _, p := range res.Copied {
			fmt.Fprintf(a.stdout, "  copied:    %s\n", safe(p))
		}
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, mirror.ErrRefused), errors.Is(err, runner.ErrMirrorNotApproved):
		fmt.Fprintln(a.stderr, safe(err.Error()))
		return exitRefused
	default:
		fmt.Fprintln(a.stderr, safe(err.Error()))
		return exitFailed
	}
}
