package consent

import (
	"bytes"
	"context"
	"encoding/hex"
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

// fileVersion is the on-disk format version: 2 signs every approval.
// Version 1 files (unsigned) are read, but none of their approvals counts.
const (
	fileVersion     = 2
	unsignedVersion = 1
)

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
	// Key authenticates every stored approval (HMAC-SHA256), so that an
	// entry written into the file by anything but this store, such as a
	// script that found a way to write there, approves nothing. Hosts
	// should supply a key kept out of the file system, such as one in the
	// OS keychain; it must hold at least MinKeyLen bytes. Nil means the key
	// in KeyFile.
	Key []byte
	// WatchInterval is how often a Store that has OnRevoke subscribers
	// looks for revocations made through another Store or process, such
	// as a second host on the same data directory or a command-line
	// revoke. Zero means DefaultWatchInterval; negative turns watching
	// off, so subscribers hear only of this Store's revocations.
	WatchInterval time.Duration
	// KeyFile holds the key when Key is nil. It is made on first use (32
	// bytes from crypto/rand, hex, mode 0600) and read once, when the store
	// opens. Empty means the store's path with the extension ".key"
	// (consent.json → consent.key). No script may reach it: the runner
	// refuses grants that reach any of [Store.Protected].
	KeyFile string
}

// Store keeps approvals in one JSON file, shared safely by every Store and
// process that opens it. Writes take a lock file beside it, re-read the
// file, change one entry and replace the file atomically, so concurrent
// writers lose nothing; reads need no lock because the file is only ever
// replaced whole. A Store is safe for concurrent use. It starts one
// goroutine, while it has OnRevoke subscribers, to notice revocations made
// elsewhere (see StoreOptions.WatchInterval); unregistering the last
// subscriber stops it.
type Store struct {
	path    string
	keyFile string // empty when the host supplied the key
	key     []byte
	log     *slog.Logger
	now     func() time.Time
	file    lockedfile.File[approvals]

	interval time.Duration

	// watchMu orders the watcher's reload against this Store's own
	// approvals, revocations and reads, so none of them is missed.
	watchMu  sync.Mutex
	mu       sync.Mutex // guards subs, next, reported, watch and known
	subs     map[int]func(Revocation)
	next     int
	reported map[string]string // script → why its entry was rejected, as last logged
	watch    *watcher
	known    map[string]bool // approvals in force, while watching
}

// approvals is the store's content: the approvals that verified, and why
// each other entry did not. Rejected entries are never approvals; they are
// dropped at the next write.
type approvals struct {
	ok       map[string]Approval
	rejected map[string]string
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
	s := &Store{path: path, log: opts.Logger, now: opts.Now, interval: opts.WatchInterval,
		subs: map[int]func(Revocation){}, reported: map[string]string{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	switch {
	case opts.Key != nil && len(opts.Key) < MinKeyLen:
		return nil, fmt.Errorf("%w: the key has %d bytes, fewer than %d", ErrKey, len(opts.Key), MinKeyLen)
	case opts.Key != nil:
		s.key = slices.Clone(opts.Key)
	default:
		s.keyFile = opts.KeyFile
		if s.keyFile == "" {
			s.keyFile = defaultKeyFile(path)
		}
		if !filepath.IsAbs(s.keyFile) {
			return nil, fmt.Errorf("%w: key file %q is not absolute", ErrKey, s.keyFile)
		}
		if err := os.MkdirAll(filepath.Dir(s.keyFile), 0o700); err != nil {
			return nil, fmt.Errorf("consent: %w", err)
		}
		k, err := loadKey(s.keyFile, path+".lock", s.log, s.now)
		if err != nil {
			return nil, err
		}
		s.key = k
	}
	s.file = lockedfile.File[approvals]{
		Path: path, Decode: decoder(s.key), Encode: encoder(s.key),
		Empty:   emptyApprovals,
		Corrupt: ErrCorrupt,
		Warning: "consent store was unreadable; moved it aside and starting empty, so scripts will ask again",
		Logger:  s.log, Now: s.now,
	}
	return s, nil
}

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// KeyFile returns the file the store's key is kept in, or "" when the host
// supplied the key.
func (s *Store) KeyFile() string { return s.keyFile }

// Protected returns the files no script may read or write: the store, its
// lock file and its key file. The runner refuses every grant that reaches
// one of them, directly or through a link.
func (s *Store) Protected() []string {
	out := []string{s.path, s.path + ".lock"}
	if s.keyFile != "" {
		out = append(out, s.keyFile)
	}
	return out
}

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

// Get returns the approval of script, if there is one. An entry for script
// that failed verification is no approval: Get reports it as absent, with
// an error wrapping ErrUnverified that says why.
func (s *Store) Get(ctx context.Context, script string) (Approval, bool, error) {
	key, err := ScriptKey(script)
	if err != nil {
		return Approval{}, false, err
	}
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	all, err := s.load(ctx)
	if err != nil {
		return Approval{}, false, err
	}
	if a, ok := all.ok[key]; ok {
		s.note(key, true) // a run may start on it
		return a, true, nil
	}
	if why, ok := all.rejected[key]; ok {
		return Approval{}, false, fmt.Errorf("%w: %s: %s", ErrUnverified, key, why)
	}
	return Approval{}, false, nil
}

// List returns every approval, sorted by script path. Users cannot revoke
// what they cannot see; hosts show this list.
func (s *Store) List(ctx context.Context) ([]Approval, error) {
	all, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Approval, 0, len(all.ok))
	for _, a := range all.ok {
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
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	err = s.update(ctx, func(all approvals) bool {
		all.ok[key] = a
		delete(all.rejected, key)
		return true
	})
	if err == nil {
		s.note(key, true)
	}
	return a, err
}

// Revoke withdraws script's approval and tells every subscriber. It reports
// whether there was one. Subscribers of other Stores on the same file, in
// this process or another, hear of it when their Store next looks (see
// StoreOptions.WatchInterval).
func (s *Store) Revoke(ctx context.Context, script string) (bool, error) {
	key, err := ScriptKey(script)
	if err != nil {
		return false, err
	}
	found := false
	s.watchMu.Lock()
	err = s.update(ctx, func(all approvals) bool {
		_, found = all.ok[key]
		_, rejected := all.rejected[key]
		delete(all.ok, key)
		delete(all.rejected, key)
		return found || rejected
	})
	if err == nil {
		s.note(key, false) // told below, not again by the watcher
	}
	s.watchMu.Unlock()
	if err != nil || !found {
		return found, err
	}
	s.mu.Lock()
	subs := s.subscribers()
	s.mu.Unlock()
	for _, f := range subs {
		f(Revocation{Script: key})
	}
	return true, nil
}

// OnRevoke registers f to be called after each revocation: one made
// through this Store, on the revoking goroutine, and one made through
// another Store or process on the same file, on the Store's watcher
// goroutine, within about StoreOptions.WatchInterval. f must not block for
// long and must not call the returned function, which unregisters f and,
// for the last subscriber, waits for the watcher to stop.
func (s *Store) OnRevoke(f func(Revocation)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.subs[id] = f
	s.watchLocked()
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		wait := s.unwatchLocked()
		s.mu.Unlock()
		if wait != nil {
			<-wait
		}
	}
}

// subscribers lists the revocation subscribers; s.mu is held.
func (s *Store) subscribers() []func(Revocation) {
	subs := make([]func(Revocation), 0, len(s.subs))
	for _, f := range s.subs {
		subs = append(subs, f)
	}
	return subs
}

// file is the on-disk form.
type file struct {
	Version   int                  `json:"version"`
	Approvals map[string]fileEntry `json:"approvals"`
}

type fileEntry struct {
	Header     string    `json:"header"`
	ApprovedAt time.Time `json:"approved_at"`
	// MAC is the hex HMAC-SHA256 of the entry (see sign); version 2 only.
	MAC string `json:"mac,omitempty"`
}

func emptyApprovals() approvals {
	return approvals{ok: map[string]Approval{}, rejected: map[string]string{}}
}

// load reads the approvals and reports, once per Store, each entry that
// failed verification; see lockedfile for what a corrupt file does.
func (s *Store) load(ctx context.Context) (approvals, error) {
	all, err := s.file.Load(ctx)
	s.report(all.rejected)
	return all, err
}

func (s *Store) report(rejected map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for script, why := range rejected {
		if s.reported[script] == why {
			continue
		}
		s.reported[script] = why
		s.log.Warn("consent: a stored approval failed verification and counts as absent; the script will ask again",
			"script", script, "reason", why, "path", s.path)
	}
}

// update changes the approvals under the cross-process lock.
func (s *Store) update(ctx context.Context, change func(approvals) bool) error {
	err := s.file.Update(ctx, func(all approvals) (approvals, bool) {
		s.report(all.rejected)
		return all, change(all)
	})
	if err != nil {
		return fmt.Errorf("consent: saving approvals: %w", err)
	}
	return nil
}

// encoder writes the verified approvals, each signed; rejected entries are
// left out.
func encoder(key []byte) func(approvals) ([]byte, error) {
	return func(all approvals) ([]byte, error) {
		f := file{Version: fileVersion, Approvals: make(map[string]fileEntry, len(all.ok))}
		for k, a := range all.ok {
			mac := hex.EncodeToString(sign(key, k, a.Header, a.ApprovedAt))
			f.Approvals[k] = fileEntry{Header: a.Header, ApprovedAt: a.ApprovedAt, MAC: mac}
		}
		out, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("consent: %w", err)
		}
		return append(out, '\n'), nil
	}
}

// Reasons an entry is rejected.
const (
	whyUnsigned = "unsigned: written before approvals were signed, or by something other than this library"
	whyBadMAC   = "its signature does not match: forged, tampered with, or signed with another key"
	whyHeader   = "its header no longer parses"
)

// decoder reads a store file. A file that is not a store (bad JSON, an
// unknown version or field, a key that is not a clean absolute path, or in
// an unsigned file a header that does not parse) is corrupt as a whole.
// Otherwise every entry is checked on its own: one that fails verification
// is rejected, with the reason, and the others stand.
func decoder(key []byte) func([]byte) (approvals, error) {
	return func(data []byte) (approvals, error) {
		var f file
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return approvals{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if dec.More() {
			return approvals{}, fmt.Errorf("%w: trailing data after the approvals", ErrCorrupt)
		}
		if f.Version != fileVersion && f.Version != unsignedVersion {
			return approvals{}, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, f.Version, fileVersion)
		}
		all := emptyApprovals()
		for k, e := range f.Approvals {
			if !filepath.IsAbs(k) || filepath.Clean(k) != k {
				return approvals{}, fmt.Errorf("%w: key %q is not a clean absolute path", ErrCorrupt, k)
			}
			_, herr := permissions.ParseCanonical(e.Header)
			switch {
			case f.Version == unsignedVersion && herr != nil:
				return approvals{}, fmt.Errorf("%w: approval of %s: %v", ErrCorrupt, k, herr)
			case f.Version == unsignedVersion || e.MAC == "":
				all.rejected[k] = whyUnsigned
			case !verify(key, k, e.Header, e.ApprovedAt, e.MAC):
				all.rejected[k] = whyBadMAC
			case herr != nil:
				all.rejected[k] = whyHeader
			default:
				all.ok[k] = Approval{Script: k, Header: e.Header, ApprovedAt: e.ApprovedAt}
			}
		}
		return all, nil
	}
}
