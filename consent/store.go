package consent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/internal/lockedfile"
	"github.com/tranquil/automation/permissions"
)

// fileVersion is the on-disk format version.
const fileVersion = 1

// Approval is one script's approved declaration.
type Approval struct {
	// Script is the script's absolute, symlink-resolved path: the key.
	Script string
	// Header is the approved canonical header (see permissions.Header.Canonical).
	Header string
	// ApprovedAt is when the user approved it.
	ApprovedAt time.Time
}

// Revocation tells a subscriber that a script's approval was withdrawn.
type Revocation struct {
	Script string
}

// ErrCorrupt reports a store file that could not be read as approvals. The
// store moves such a file aside and starts empty, so every script is asked
// about again; nothing is approved by accident.
var ErrCorrupt = errors.New("consent: store file is corrupt")

// StoreOptions configures a Store. The zero value is usable.
type StoreOptions struct {
	// Logger receives warnings, such as a corrupt file moved aside. Nil
	// means slog.Default().
	Logger *slog.Logger
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Store keeps approvals in one JSON file, shared safely by every Store and
// process that opens it. Writes take a lock file beside it, re-read the
// file, change one entry and replace the file atomically, so concurrent
// writers lose nothing; reads need no lock because the file is only ever
// replaced whole. A Store is safe for concurrent use and starts no
// goroutines.
type Store struct {
	path string
	log  *slog.Logger
	now  func() time.Time
	file lockedfile.File[map[string]Approval]

	mu   sync.Mutex // guards subs and next
	subs map[int]func(Revocation)
	next int
}

// OpenStore returns a Store backed by path, creating its directory (mode
// 0700) if needed. The file itself is created on the first approval, with
// mode 0600.
func OpenStore(path string, opts StoreOptions) (*Store, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("consent: store path %q is not absolute", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	s := &Store{path: path, log: opts.Logger, now: opts.Now, subs: map[int]func(Revocation){}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.file = lockedfile.File[map[string]Approval]{
		Path: path, Decode: decode, Encode: encode,
		Empty:   func() map[string]Approval { return map[string]Approval{} },
		Corrupt: ErrCorrupt,
		Warning: "consent store was unreadable; moved it aside and starting empty, so scripts will ask again",
		Logger:  s.log, Now: s.now,
	}
	return s, nil
}

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// ScriptKey returns the key approvals of a script are stored under: its
// absolute path with every symlink resolved. A script that no longer exists
// keys by its cleaned absolute path, so it can still be revoked.
func ScriptKey(script string) (string, error) {
	abs, err := filepath.Abs(script)
	if err != nil {
		return "", fmt.Errorf("consent: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return abs, nil
	}
	if err != nil {
		return "", fmt.Errorf("consent: %w", err)
	}
	return real, nil
}

// Get returns the approval of script, if there is one.
func (s *Store) Get(ctx context.Context, script string) (Approval, bool, error) {
	key, err := ScriptKey(script)
	if err != nil {
		return Approval{}, false, err
	}
	all, err := s.load(ctx)
	if err != nil {
		return Approval{}, false, err
	}
	a, ok := all[key]
	return a, ok, nil
}

// List returns every approval, sorted by script path. Users cannot revoke
// what they cannot see; hosts show this list.
func (s *Store) List(ctx context.Context) ([]Approval, error) {
	all, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Approval, 0, len(all))
	for _, a := range all {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Approval) int { return strings.Compare(a.Script, b.Script) })
	return out, nil
}

// Approve records that the user approved header (a canonical form) for
// script, replacing any earlier approval.
func (s *Store) Approve(ctx context.Context, script, header string) (Approval, error) {
	if _, err := permissions.ParseCanonical(header); err != nil {
		return Approval{}, fmt.Errorf("consent: approving %s: %w", script, err)
	}
	key, err := ScriptKey(script)
	if err != nil {
		return Approval{}, err
	}
	a := Approval{Script: key, Header: header, ApprovedAt: s.now().UTC().Truncate(time.Second)}
	err = s.update(ctx, func(all map[string]Approval) bool {
		all[key] = a
		return true
	})
	return a, err
}

// Revoke withdraws script's approval and tells every subscriber. It reports
// whether there was one. Subscribers hear only of revocations made through
// this Store; another process's revocation takes effect at the next
// authorization, which then asks the user again.
func (s *Store) Revoke(ctx context.Context, script string) (bool, error) {
	key, err := ScriptKey(script)
	if err != nil {
		return false, err
	}
	found := false
	err = s.update(ctx, func(all map[string]Approval) bool {
		_, found = all[key]
		delete(all, key)
		return found
	})
	if err != nil || !found {
		return found, err
	}
	s.mu.Lock()
	subs := make([]func(Revocation), 0, len(s.subs))
	for _, f := range s.subs {
		subs = append(subs, f)
	}
	s.mu.Unlock()
	for _, f := range subs {
		f(Revocation{Script: key})
	}
	return true, nil
}

// OnRevoke registers f to be called after each revocation made through this
// Store, on the revoking goroutine; f must not block for long. The returned
// function unregisters f.
func (s *Store) OnRevoke(f func(Revocation)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.subs[id] = f
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

// file is the on-disk form.
type file struct {
	Version   int                  `json:"version"`
	Approvals map[string]fileEntry `json:"approvals"`
}

type fileEntry struct {
	Header     string    `json:"header"`
	ApprovedAt time.Time `json:"approved_at"`
}

// load reads the approvals; see lockedfile for what a corrupt file does.
func (s *Store) load(ctx context.Context) (map[string]Approval, error) {
	return s.file.Load(ctx)
}

// update changes the approvals under the cross-process lock.
func (s *Store) update(ctx context.Context, change func(map[string]Approval) bool) error {
	err := s.file.Update(ctx, func(all map[string]Approval) (map[string]Approval, bool) {
		return all, change(all)
	})
	if err != nil {
		return fmt.Errorf("consent: saving approvals: %w", err)
	}
	return nil
}

func encode(all map[string]Approval) ([]byte, error) {
	f := file{Version: fileVersion, Approvals: make(map[string]fileEntry, len(all))}
	for k, a := range all {
		f.Approvals[k] = fileEntry{Header: a.Header, ApprovedAt: a.ApprovedAt}
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	return append(out, '\n'), nil
}

func decode(data []byte) (map[string]Approval, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the approvals", ErrCorrupt)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, f.Version, fileVersion)
	}
	all := make(map[string]Approval, len(f.Approvals))
	for k, e := range f.Approvals {
		if !filepath.IsAbs(k) || filepath.Clean(k) != k {
			return nil, fmt.Errorf("%w: key %q is not a clean absolute path", ErrCorrupt, k)
		}
		if _, err := permissions.ParseCanonical(e.Header); err != nil {
			return nil, fmt.Errorf("%w: approval of %s: %v", ErrCorrupt, k, err)
		}
		all[k] = Approval{Script: k, Header: e.Header, ApprovedAt: e.ApprovedAt}
	}
	return all, nil
}
