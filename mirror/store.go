package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/internal/lockedfile"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/permissions"
)

// fileVersion is the on-disk format version.
const fileVersion = 1

// FileName is the name of the declarations file [OpenBeside] opens next to
// the consent approvals.
const FileName = "mirrors.json"

// Errors of the store.
var (
	// ErrCorrupt reports a declarations file that could not be read. The
	// store moves it aside and starts empty: no mirror runs until the user
	// declares it again, so nothing is copied to a folder by accident.
	ErrCorrupt = errors.New("mirror: store file is corrupt")
	// ErrNoMirror reports that no mirror applies to a script.
	ErrNoMirror = errors.New("mirror: no mirror is declared for this script")
	// ErrInvalid reports an unusable declaration (a relative path, an
	// unknown scope).
	ErrInvalid = errors.New("mirror: invalid declaration")
)

// Scope says what a declaration is keyed by.
type Scope string

const (
	// ScopeScript keys a mirror by one script's real path.
	ScopeScript Scope = "script"
	// ScopeWorkspace keys a mirror by a directory: it applies to every
	// script whose real path lies inside it and has no mirror of its own.
	ScopeWorkspace Scope = "workspace"
)

// Mirror is one declaration and its visible state.
type Mirror struct {
	// Scope and Key identify the declaration: Key is the real path of the
	// script or workspace directory (see consent.ScriptKey).
	Scope Scope
	Key   string
	// Dest is the destination directory, absolute and clean, as the user
	// named it.
	Dest string
	// DeclaredAt is when the user declared it.
	DeclaredAt time.Time
	// State is what the last sync did.
	State State
}

// Base is the directory that source paths are laid out relative to in
// the destination: the script's directory, or the workspace itself.
func (m Mirror) Base() string {
	if m.Scope == ScopeWorkspace {
		return m.Key
	}
	return filepath.Dir(m.Key)
}

// Outcome classifies a mirror's last sync.
type Outcome string

const (
	// OutcomeNever: the mirror has never synced.
	OutcomeNever Outcome = "never"
	// OutcomeFailed: the last sync hit an error (State.LastError); files it
	// copied before that are counted in State.Copied.
	OutcomeFailed Outcome = "failed"
	// OutcomeNothing: the last sync succeeded and found nothing to copy.
	OutcomeNothing Outcome = "nothing"
	// OutcomeCopied: the last sync succeeded and copied State.Copied files.
	OutcomeCopied Outcome = "copied"
)

// State is the visible state of one mirror. The zero value means the
// mirror never synced.
type State struct {
	// LastSync is when the last sync ended; zero means never.
	LastSync time.Time
	// Trigger says what started it: "run <id>" or "sync".
	Trigger string
	// Copied counts the files the last sync wrote; Unchanged those it
	// found identical (same size and modification time) and left alone.
	Copied    int
	Unchanged int
	// Skipped lists what the last sync refused to copy and why (at most
	// MaxSkipsKept entries; SkippedTotal counts them all).
	Skipped      []Skip
	SkippedTotal int
	// LastError is the last sync's error, empty when it succeeded.
	LastError string
}

// MaxSkipsKept bounds the skips a State keeps, so a tree full of links
// cannot bloat the declarations file.
const MaxSkipsKept = 32

// Outcome classifies the state; "never synced" and "synced, nothing to
// copy" are distinct.
func (s State) Outcome() Outcome {
	switch {
	case s.LastSync.IsZero():
		return OutcomeNever
	case s.LastError != "":
		return OutcomeFailed
	case s.Copied > 0:
		return OutcomeCopied
	default:
		return OutcomeNothing
	}
}

// Options configures a Store. The zero value is usable.
type Options struct {
	// Logger receives warnings, such as a corrupt file moved aside. Nil
	// means slog.Default().
	Logger *slog.Logger
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Store keeps mirror declarations and their state in one JSON file, with
// the same discipline as the consent approvals: writers take a lock file
// beside it, re-read, change one entry and replace the file atomically;
// readers need no lock. A Store is safe for concurrent use and starts no
// goroutines: a mirror syncs only when [Store.Sync] is called.
type Store struct {
	path string
	log  *slog.Logger
	now  func() time.Time
	file lockedfile.File[*entries]

	mu    sync.Mutex // guards syncs
	syncs map[string]*sync.Mutex
}

// OpenStore returns a Store backed by path (absolute), creating its
// directory (mode 0700) if needed. The file is created on the first Set,
// with mode 0600.
func OpenStore(path string, opts Options) (*Store, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%w: store path %q is not absolute", ErrInvalid, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	s := &Store{path: filepath.Clean(path), log: opts.Logger, now: opts.Now, syncs: map[string]*sync.Mutex{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.file = lockedfile.File[*entries]{
		Path: s.path, Decode: decode, Encode: encode, Empty: newEntries,
		Corrupt: ErrCorrupt,
		Warning: "mirror store was unreadable; moved it aside and starting empty, so no mirror runs until declared again",
		Logger:  s.log, Now: s.now,
	}
	return s, nil
}

// OpenBeside opens the declarations stored with the consent data: the
// file [FileName] in the directory of approvals' file.
func OpenBeside(approvals *consent.Store, opts Options) (*Store, error) {
	return OpenStore(filepath.Join(filepath.Dir(approvals.Path()), FileName), opts)
}

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// Set declares (or replaces) the mirror of a script or workspace. It is
// the user's act, made through the host; scripts have no way to call it.
// The destination is checked by the guard before anything is stored: it
// may neither contain nor lie inside the script's directory (or the
// workspace), nor any write= grant the script declares now. A changed
// destination starts from a "never synced" state.
func (s *Store) Set(ctx context.Context, scope Scope, target, dest string) (Mirror, error) {
	key, err := keyOf(scope, target)
	if err != nil {
		return Mirror{}, err
	}
	if !filepath.IsAbs(dest) {
		return Mirror{}, fmt.Errorf("%w: destination %q is not absolute", ErrInvalid, dest)
	}
	dest = filepath.Clean(dest)
	m := Mirror{Scope: scope, Key: key, Dest: dest, DeclaredAt: s.now().UTC().Truncate(time.Second)}
	protected := []string{m.Base()}
	if scope == ScopeScript {
		// Best effort: the header can change later, so every sync checks
		// again against the roots of the run at hand.
		if src, err := os.ReadFile(key); err == nil {
			if h, err := permissions.Parse(src, key); err == nil {
				protected = append(protected, h.ScriptDir)
				for _, w := range h.Write {
					protected = append(protected, w.Resolved)
				}
			}
		}
	}
	if _, err := checkDestination(dest, protected); err != nil {
		return Mirror{}, err
	}
	err = s.update(ctx, func(all *entries) bool {
		tbl := all.table(scope)
		if old, ok := tbl[key]; ok && old.Dest == dest {
			m.State = old.State
		}
		tbl[key] = m
		return true
	})
	return m, err
}

// Get returns the declaration made for exactly this scope and target.
func (s *Store) Get(ctx context.Context, scope Scope, target string) (Mirror, bool, error) {
	key, err := keyOf(scope, target)
	if err != nil {
		return Mirror{}, false, err
	}
	all, err := s.load(ctx)
	if err != nil {
		return Mirror{}, false, err
	}
	m, ok := all.table(scope)[key]
	return m, ok, nil
}

// Status returns the mirror that applies to script, with its state: the
// script's own declaration, or else the one of the innermost workspace
// holding it.
func (s *Store) Status(ctx context.Context, script string) (Mirror, bool, error) {
	key, err := consent.ScriptKey(script)
	if err != nil {
		return Mirror{}, false, err
	}
	all, err := s.load(ctx)
	if err != nil {
		return Mirror{}, false, err
	}
	m, ok := all.lookup(key)
	return m, ok, nil
}

// List returns every declaration, scripts first, each group sorted by key.
// Users cannot revoke what they cannot see; hosts show this list.
func (s *Store) List(ctx context.Context) ([]Mirror, error) {
	all, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Mirror, 0, len(all.scripts)+len(all.workspaces))
	for _, tbl := range []map[string]Mirror{all.scripts, all.workspaces} {
		start := len(out)
		for _, m := range tbl {
			out = append(out, m)
		}
		slices.SortFunc(out[start:], func(a, b Mirror) int { return strings.Compare(a.Key, b.Key) })
	}
	return out, nil
}

// Remove withdraws a declaration and reports whether there was one. Files
// already copied stay in the destination: a mirror never deletes.
func (s *Store) Remove(ctx context.Context, scope Scope, target string) (bool, error) {
	key, err := keyOf(scope, target)
	if err != nil {
		return false, err
	}
	found := false
	err = s.update(ctx, func(all *entries) bool {
		tbl := all.table(scope)
		_, found = tbl[key]
		delete(tbl, key)
		return found
	})
	return found, err
}

// record stores the state of a sync, unless the declaration was removed
// or pointed elsewhere meanwhile: a finished sync never resurrects or
// rewrites a declaration the user changed.
func (s *Store) record(ctx context.Context, m Mirror, st State) error {
	return s.update(ctx, func(all *entries) bool {
		tbl := all.table(m.Scope)
		cur, ok := tbl[m.Key]
		if !ok || cur.Dest != m.Dest {
			return false
		}
		cur.State = st
		tbl[m.Key] = cur
		return true
	})
}

func keyOf(scope Scope, target string) (string, error) {
	if scope != ScopeScript && scope != ScopeWorkspace {
		return "", fmt.Errorf("%w: scope %q", ErrInvalid, scope)
	}
	if !filepath.IsAbs(target) {
		return "", fmt.Errorf("%w: %s %q is not absolute", ErrInvalid, scope, target)
	}
	key, err := consent.ScriptKey(target)
	if err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	return key, nil
}

// entries are the declarations in memory.
type entries struct {
	scripts, workspaces map[string]Mirror
}

func newEntries() *entries {
	return &entries{scripts: map[string]Mirror{}, workspaces: map[string]Mirror{}}
}

func (e *entries) table(scope Scope) map[string]Mirror {
	if scope == ScopeWorkspace {
		return e.workspaces
	}
	return e.scripts
}

// lookup finds the mirror of a script key: its own, else the innermost
// workspace's.
func (e *entries) lookup(key string) (Mirror, bool) {
	if m, ok := e.scripts[key]; ok {
		return m, true
	}
	var best Mirror
	found := false
	for k, m := range e.workspaces {
		if k != key && pathguard.Contains(k, key) && (!found || len(k) > len(best.Key)) {
			best, found = m, true
		}
	}
	return best, found
}

// file is the on-disk form.
type file struct {
	Version    int                  `json:"version"`
	Scripts    map[string]fileEntry `json:"scripts"`
	Workspaces map[string]fileEntry `json:"workspaces"`
}

type fileEntry struct {
	Dest       string    `json:"dest"`
	DeclaredAt time.Time `json:"declared_at"`
	State      fileState `json:"state"`
}

type fileState struct {
	LastSync     time.Time `json:"last_sync,omitzero"`
	Trigger      string    `json:"trigger,omitempty"`
	Copied       int       `json:"copied"`
	Unchanged    int       `json:"unchanged"`
	Skipped      []Skip    `json:"skipped,omitempty"`
	SkippedTotal int       `json:"skipped_total"`
	LastError    string    `json:"last_error,omitempty"`
}

func decode(data []byte) (*entries, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the mirrors", ErrCorrupt)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, f.Version, fileVersion)
	}
	all := newEntries()
	for scope, tbl := range map[Scope]map[string]fileEntry{ScopeScript: f.Scripts, ScopeWorkspace: f.Workspaces} {
		for k, e := range tbl {
			m := Mirror{Scope: scope, Key: k, Dest: e.Dest, DeclaredAt: e.DeclaredAt, State: State(e.State)}
			if err := m.valid(); err != nil {
				return nil, fmt.Errorf("%w: %s %s: %v", ErrCorrupt, scope, k, err)
			}
			all.table(scope)[k] = m
		}
	}
	return all, nil
}

// valid checks what a decoded declaration must satisfy before anything
// acts on it.
func (m Mirror) valid() error {
	for _, p := range []string{m.Key, m.Dest} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("%q is not a clean absolute path", p)
		}
	}
	st := m.State
	switch {
	case st.Copied < 0 || st.Unchanged < 0 || st.SkippedTotal < len(st.Skipped):
		return errors.New("negative or inconsistent counts")
	case len(st.Skipped) > MaxSkipsKept:
		return errors.New("too many skips kept")
	case st.LastSync.IsZero() && (st.Copied != 0 || st.Unchanged != 0 || st.SkippedTotal != 0 || st.LastError != "" || st.Trigger != ""):
		return errors.New("a mirror that never synced has sync results")
	}
	for _, sk := range st.Skipped {
		if !sk.Reason.known() {
			return fmt.Errorf("unknown skip reason %q", sk.Reason)
		}
	}
	return nil
}

func encode(all *entries) ([]byte, error) {
	f := file{Version: fileVersion, Scripts: map[string]fileEntry{}, Workspaces: map[string]fileEntry{}}
	for _, pair := range []struct {
		in  map[string]Mirror
		out map[string]fileEntry
	}{{all.scripts, f.Scripts}, {all.workspaces, f.Workspaces}} {
		for k, m := range pair.in {
			pair.out[k] = fileEntry{Dest: m.Dest, DeclaredAt: m.DeclaredAt, State: fileState(m.State)}
		}
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return append(out, '\n'), nil
}

// load reads the declarations; see lockedfile for what a corrupt file
// does.
func (s *Store) load(ctx context.Context) (*entries, error) {
	all, err := s.file.Load(ctx)
	if err != nil {
		return all, fmt.Errorf("mirror: %w", err)
	}
	return all, nil
}

// update applies change under the cross-process lock and writes the file
// back if change reports a modification.
func (s *Store) update(ctx context.Context, change func(*entries) bool) error {
	err := s.file.Update(ctx, func(all *entries) (*entries, bool) { return all, change(all) })
	if err != nil {
		return fmt.Errorf("mirror: saving declarations: %w", err)
	}
	return nil
}

// syncLock serialises syncs of one mirror within this Store, so two runs
// of a script ending together do not copy the same files at once.
func (s *Store) syncLock(m Mirror) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := string(m.Scope) + "\x00" + m.Key
	l, ok := s.syncs[id]
	if !ok {
		l = &sync.Mutex{}
		s.syncs[id] = l
	}
	return l
}
