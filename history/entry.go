package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind says what ran. The runs panel lists every kind together: the
// scripts a runner.Manager runs, the runs of a workflow engine, and any
// other kind a host records, named by a short lower-case word.
type Kind string

// Kinds of run. The empty Kind is stored as [KindScript].
const (
	KindScript   Kind = "script"   // a script a runner.Manager ran
	KindWorkflow Kind = "workflow" // a run of a workflow engine, recorded by the host
)

// maxKind is the longest kind name.
const maxKind = 32

// valid reports whether k is a kind name: a lower-case letter, then
// lower-case letters, digits, '-' or '_', at most maxKind bytes. The rule
// keeps a kind something a panel can show and filter on, and catches
// what is not a name at all.
func (k Kind) valid() bool {
	if k == "" || len(k) > maxKind || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for _, c := range []byte(k) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// State is where a run is in its life. The first four are live; the rest
// are terminal and final.
type State string

// States of a run.
const (
	// StatePreparing: started, and being read, approved (the consent
	// prompt may be open) and checked, before it takes its place in line.
	StatePreparing State = "preparing"
	// StateQueued: ready, waiting for a slot; slots go in the order runs
	// were started.
	StateQueued    State = "queued"
	StateStarting  State = "starting"
	StateRunning   State = "running"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
	StateTimedOut  State = "timed_out"
	StateRefused   State = "refused"
)

// Terminal reports whether s is a final state: the run is over.
func (s State) Terminal() bool {
	switch s {
	case StateSucceeded, StateFailed, StateCancelled, StateTimedOut, StateRefused:
		return true
	}
	return false
}

func (s State) valid() bool {
	switch s {
	case StatePreparing, StateQueued, StateStarting, StateRunning:
		return true
	}
	return s.Terminal()
}

// Action is one entry of a run's action log: an operation a script asked
// the host to perform. It never holds a value typed into a form.
type Action struct {
	At time.Time
	// Method is the page operation by its name in the SDK without the
	// object it was called on: "fill", "click", "goto", "open", "close",
	// "setFiles". The last entry of a log cut at its limit has "…" and
	// says in Outcome how many actions were not kept.
	Method  string
	Target  string // what it acted on, e.g. a field label or selector
	Site    string // the origin it acted on
	Outcome string // "ok" or a short error
}

// Entry is the record of one run. A Store keeps copies: changing an Entry
// after Put, or one returned by Get or List, does not change the Store.
type Entry struct {
	ID      string
	Kind    Kind
	Script  string // the script's path, or what ran for another Kind (a workflow's name)
	Trigger string // what started the run, e.g. "manual", "pane"

	State    State
	ExitCode *int   // nil when the process never exited on its own
	Signal   string // the signal that ended the process, if any
	Reason   string // why the run was refused, cancelled or failed

	Start    time.Time
	End      time.Time
	Duration time.Duration

	// Output is the run's combined output, capped by [Output]: head and
	// tail with a marker line between when OutputTruncated.
	Output          string
	OutputTruncated bool
	// FirstError is the first line of the error or stack trace.
	FirstError string
	// Result is the JSON the script passed to context.result; nil if none.
	// Its bytes are kept exactly as given.
	Result json.RawMessage

	// Warnings are things that went wrong without failing the run, such
	// as host calls the script had not awaited when it ended (they were
	// cut off), one per line.
	Warnings []string

	Actions []Action
	// Permissions is the canonical permissions header the run had.
	Permissions string
}

// ErrInvalidEntry reports an Entry that Put refuses to store.
var ErrInvalidEntry = errors.New("history: invalid entry")

// normalize returns a deep copy of e in the form the Store keeps and the
// file round-trips exactly: times in UTC without a monotonic reading,
// strings as valid UTF-8, empty slices as nil, the empty Kind as
// KindScript. It reports why e cannot be stored.
func normalize(e Entry) (Entry, error) {
	if e.ID == "" {
		return Entry{}, fmt.Errorf("%w: empty ID", ErrInvalidEntry)
	}
	if e.Kind == "" {
		e.Kind = KindScript
	}
	if !e.Kind.valid() {
		return Entry{}, fmt.Errorf("%w: run %s: kind %q is not a lower-case word", ErrInvalidEntry, e.ID, e.Kind)
	}
	if !e.State.valid() {
		return Entry{}, fmt.Errorf("%w: run %s: unknown state %q", ErrInvalidEntry, e.ID, e.State)
	}
	if len(e.Result) == 0 {
		e.Result = nil
	} else if !json.Valid(e.Result) {
		return Entry{}, fmt.Errorf("%w: run %s: result is not valid JSON", ErrInvalidEntry, e.ID)
	}
	e.Start, e.End = e.Start.UTC(), e.End.UTC()
	for _, p := range []*string{&e.ID, &e.Script, &e.Trigger, &e.Signal, &e.Reason, &e.Output, &e.FirstError, &e.Permissions} {
		*p = strings.ToValidUTF8(*p, "\uFFFD")
	}
	e = clone(e)
	for i := range e.Warnings {
		e.Warnings[i] = strings.ToValidUTF8(e.Warnings[i], "\uFFFD")
	}
	for i := range e.Actions {
		a := &e.Actions[i]
		a.At = a.At.UTC()
		for _, p := range []*string{&a.Method, &a.Target, &a.Site, &a.Outcome} {
			*p = strings.ToValidUTF8(*p, "\uFFFD")
		}
	}
	return e, nil
}

// clone copies everything in e that aliases memory.
func clone(e Entry) Entry {
	if e.ExitCode != nil {
		c := *e.ExitCode
		e.ExitCode = &c
	}
	if len(e.Result) == 0 {
		e.Result = nil
	} else {
		e.Result = slices.Clone(e.Result)
	}
	if len(e.Warnings) == 0 {
		e.Warnings = nil
	} else {
		e.Warnings = slices.Clone(e.Warnings)
	}
	if len(e.Actions) == 0 {
		e.Actions = nil
	} else {
		e.Actions = slices.Clone(e.Actions)
	}
	return e
}

// newer orders entries newest first: by Start, then by ID so the order is
// total.
func newer(a, b Entry) int {
	if c := b.Start.Compare(a.Start); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}
