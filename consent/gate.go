package consent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tranquil/automation/permissions"
)

// ErrDenied is returned by Authorize when the user refuses a script.
var ErrDenied = errors.New("consent: the user did not approve this script's permissions")

// Answer is the user's reply to a prompt.
type Answer int

const (
	// Deny refuses the run; nothing is stored.
	Deny Answer = iota
	// Approve allows the run and remembers the declaration.
	Approve
)

// Request is what the host shows the user.
type Request struct {
	// Script is the script's absolute, symlink-resolved path.
	Script string
	// Header is the declaration being asked about.
	Header *permissions.Header
	// Grants words every grant of Header, one line each, with its risk.
	Grants []permissions.Description
	// Added and Removed word what changed since the approved declaration.
	// On a first run, Added lists every grant and Removed is empty.
	Added, Removed []permissions.Description
	// Previous is the approved canonical header, empty on a first run.
	Previous string
	// FirstRun reports that no approval existed for this script.
	FirstRun bool
	// Unverified is set, wrapping ErrUnverified, when the store held an
	// entry for this script that failed verification. It approves nothing,
	// but someone may have tried to approve the script behind the user's
	// back, which the prompt should say.
	Unverified error
}

// Prompter asks the user. Ask blocks until the user answers or ctx ends; an
// error counts as a refusal. Hosts implement it with their own dialog.
type Prompter interface {
	Ask(ctx context.Context, req Request) (Answer, error)
}

// PrompterFunc adapts a function to Prompter.
type PrompterFunc func(ctx context.Context, req Request) (Answer, error)

// Ask calls f.
func (f PrompterFunc) Ask(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Decision is the outcome of an authorization that allowed the run.
type Decision struct {
	// Prompted reports whether the user was asked.
	Prompted bool
	// FirstRun reports that the script had no approval before.
	FirstRun bool
	// Warning is set when the run is allowed but the store could not be
	// read or written (the approval will be asked for again next time), or
	// held an entry for the script that failed verification (it wraps
	// ErrUnverified then).
	Warning error
}

// Gate decides whether a script may run with the declaration it carries.
// It is safe for concurrent use: concurrent Authorize calls for the same
// script and declaration share one prompt.
type Gate struct {
	store    *Store
	prompter Prompter

	mu       sync.Mutex
	inflight map[flightKey]*flight
}

type flightKey struct{ script, header string }

type flight struct {
	done    chan struct{}
	waiters int
	// withdrawn is set (under Gate.mu) once every waiter left: the prompt
	// is taken down, and a later Authorize asks afresh.
	withdrawn bool
	cancel    context.CancelFunc
	decision  Decision
	err       error
}

// NewGate returns a Gate that remembers approvals in store and asks p.
func NewGate(store *Store, p Prompter) *Gate {
	return &Gate{store: store, prompter: p, inflight: map[flightKey]*flight{}}
}

// Store returns the gate's store, for listing and revoking.
func (g *Gate) Store() *Store { return g.store }

// Authorize decides whether script may run with header h:
//
//   - a declaration of none needs no prompt;
//   - an approved, unchanged declaration runs without a prompt;
//   - a new or changed one is put to the Prompter with the diff; Approve
//     stores it, Deny returns an error wrapping ErrDenied.
//
// A corrupt store never approves anything: it is moved aside and the user
// is asked again. Nor does an entry that fails verification: the user is
// asked again, and Request.Unverified says why.
//
// Authorize returns once ctx ends, whether or not the Prompter honours
// its own context; when no caller waits any more, the prompt's context
// ends, and an answer the Prompter gives after that approves nothing.
func (g *Gate) Authorize(ctx context.Context, script string, h *permissions.Header) (Decision, error) {
	if h == nil {
		return Decision{}, fmt.Errorf("consent: no header for %s", script)
	}
	key, err := ScriptKey(script)
	if err != nil {
		return Decision{}, err
	}
	if h.None {
		return Decision{}, nil
	}
	canonical := h.Canonical()
	prev, found, readErr := g.store.Get(ctx, key)
	if readErr == nil && found && prev.Header == canonical {
		return Decision{}, nil
	}

	fk := flightKey{key, canonical}
	g.mu.Lock()
	f, shared := g.inflight[fk]
	if !shared || f.withdrawn {
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		g.inflight[fk] = f
		go g.ask(pctx, fk, f, h, prev, found, readErr)
	}
	f.waiters++
	g.mu.Unlock()

	select {
	case <-f.done:
		return f.decision, f.err
	case <-ctx.Done():
		g.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			f.withdrawn = true
			f.cancel() // nobody is waiting: take the prompt down
		}
		g.mu.Unlock()
		return Decision{}, fmt.Errorf("consent: waiting for an answer about %s: %w", key, ctx.Err())
	}
}

// ask runs one prompt on behalf of every waiter. It is owned by the Gate
// and ends when the Prompter returns, which it must once its context ends.
func (g *Gate) ask(ctx context.Context, fk flightKey, f *flight, h *permissions.Header, prev Approval, found bool, readErr error) {
	defer func() {
		f.cancel()
		g.mu.Lock()
		if g.inflight[fk] == f { // a withdrawn prompt may have been replaced
			delete(g.inflight, fk)
		}
		g.mu.Unlock()
		close(f.done)
	}()
	req := Request{Script: fk.script, Header: h, Grants: h.Describe(), FirstRun: !found}
	if errors.Is(readErr, ErrUnverified) {
		req.Unverified = readErr
	}
	if found {
		old, err := permissions.ParseCanonical(prev.Header)
		if err == nil {
			d := permissions.Diff(old, h.Grants())
			req.Added, req.Removed = describeSubset(h.Describe(), d.Added), d.Removed.Describe()
		}
		req.Previous = prev.Header
	} else {
		req.Added = req.Grants
	}
	answer, err := g.prompter.Ask(ctx, req)
	if ctx.Err() != nil {
		// Withdrawn: nobody waits for this answer, and a Prompter that
		// answered late must not approve a run no one started.
		f.err = fmt.Errorf("%w: the prompt was withdrawn: %w", ErrDenied, ctx.Err())
		return
	}
	if err != nil {
		f.err = fmt.Errorf("%w: the prompt failed: %w", ErrDenied, err)
		return
	}
	if answer != Approve {
		f.err = fmt.Errorf("%w: %s", ErrDenied, fk.script)
		return
	}
	f.decision = Decision{Prompted: true, FirstRun: !found, Warning: readErr}
	if _, err := g.store.Approve(ctx, fk.script, fk.header); err != nil {
		f.decision.Warning = err
	}
}

// describeSubset picks the descriptions of the given grants from all, which
// carry file-or-folder knowledge that a bare canonical grant lacks.
func describeSubset(all []permissions.Description, gs permissions.Grants) []permissions.Description {
	var out []permissions.Description
	for _, d := range all {
		for _, g := range gs {
			if d.Grant == g {
				out = append(out, d)
			}
		}
	}
	return out
}
