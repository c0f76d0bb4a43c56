package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/internal/pathguard"
)

// Source is what one sync copies from: a script and the write= grants of
// the run (or of the approved header, for an explicit sync).
type Source struct {
	// Script is the script's path; the mirror that applies to it is used.
	Script string
	// ScriptDir is the script's real directory (permissions.Header.ScriptDir).
	ScriptDir string
	// WriteRoots are the resolved write= grants
	// (permissions.Path.Resolved): real paths of files or directories. A
	// root that no longer resolves to itself (a link was put in its place
	// or along its path) is skipped and reported.
	WriteRoots []string
	// Trigger says what started the sync, for the state: "run <id>" or
	// "sync".
	Trigger string
}

// SkipReason says why a file was not copied.
type SkipReason string

const (
	// SkipSourceLink: a symlink in the source tree resolves outside its
	// write root (or cannot be resolved).
	SkipSourceLink SkipReason = "source-link-escapes"
	// SkipDestLink: a symlink along the destination path leads outside
	// the destination.
	SkipDestLink SkipReason = "destination-link-escapes"
	// SkipNotRegular: the source is not a regular file (a socket, a
	// device, a pipe).
	SkipNotRegular SkipReason = "not-regular"
	// SkipConflict: two write roots map to the same destination path; the
	// first one wins.
	SkipConflict SkipReason = "conflict"
)

func (r SkipReason) known() bool {
	switch r {
	case SkipSourceLink, SkipDestLink, SkipNotRegular, SkipConflict:
		return true
	}
	return false
}

// Skip is one file a sync refused to copy. Skips are reported, never
// fatal: the rest of the tree is still copied.
type Skip struct {
	// Path is the source path.
	Path   string     `json:"path"`
	Reason SkipReason `json:"reason"`
}

// Result is what one sync did.
type Result struct {
	// Mirror is the declaration that was synced, with its new state.
	Mirror Mirror
	// Copied lists the destination-relative paths written.
	Copied []string
	// Unchanged counts the files already identical in the destination.
	Unchanged int
	// Skipped lists what was not copied, and why.
	Skipped []Skip
}

// Sync copies the files under src's write roots that differ from the
// destination of the mirror applying to src.Script, and records the
// outcome in the mirror's state. It returns ErrNoMirror when none applies.
// Otherwise the state is recorded whatever happens; the error (also in
// State.LastError) is a refused destination (ErrRefused), a cancelled ctx,
// or the copies that failed, joined. Skips are not errors.
//
// What is copied: every regular file under each write root whose size or
// modification time differs from the destination file's (the destination
// gets the source's modification time, so an unchanged file is not copied
// again). A content change that keeps both size and modification time is
// not noticed; filesystems with nanosecond timestamps make that
// practically impossible, and it keeps a sync from reading every file
// twice. The layout in the destination is the source's path relative to
// the mirror's base (the script's directory, or the workspace); a write
// root outside the base lands under its own name.
//
// A sync only ever creates directories and replaces files: each file is
// written to a temporary file beside its target, synced and renamed over
// it, so a reader sees the old or the new content, never half. Nothing in
// the destination is ever deleted: a file the script removed stays there.
// A destination file the user edited is overwritten once it differs from
// the source again.
func (s *Store) Sync(ctx context.Context, src Source) (Result, error) {
	key, err := consent.ScriptKey(src.Script)
	if err != nil {
		return Result{}, err
	}
	all, err := s.load(ctx)
	if err != nil {
		return Result{}, err
	}
	m, ok := all.lookup(key)
	if !ok {
		return Result{}, ErrNoMirror
	}
	l := s.syncLock(m)
	l.Lock()
	defer l.Unlock()

	res := Result{}
	err = copyTree(ctx, m, src, &res)
	st := State{LastSync: s.now().UTC(), Trigger: src.Trigger, Copied: len(res.Copied), Unchanged: res.Unchanged, SkippedTotal: len(res.Skipped)}
	st.Skipped = res.Skipped[:min(len(res.Skipped), MaxSkipsKept)]
	if err != nil {
		st.LastError = err.Error()
	}
	m.State = st
	res.Mirror = m
	// The state is recorded even when ctx ended, so a cancelled sync is
	// visible as one.
	if rerr := s.record(context.WithoutCancel(ctx), m, st); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return res, err
}

// copyTree does one sync into res.
func copyTree(ctx context.Context, m Mirror, src Source, res *Result) error {
	base := m.Base()
	protected := append([]string{base, src.ScriptDir}, src.WriteRoots...)
	root, err := checkDestination(m.Dest, protected)
	if err != nil {
		return err
	}
	claimed := map[string]string{} // destination-relative path → source
	var errs []error
	for _, w := range src.WriteRoots {
		// Resolve again: the grant was resolved when the header was
		// parsed, and a link may have been swapped in since. The approved
		// real path is the root; a root that now leads elsewhere escapes it.
		_, wreal, err := pathguard.Resolve(w)
		if err != nil {
			errs = append(errs, fmt.Errorf("mirror: write root %s: %w", w, err))
			continue
		}
		if wreal != filepath.Clean(w) {
			res.Skipped = append(res.Skipped, Skip{Path: w, Reason: SkipSourceLink})
			continue
		}
		prefix := filepath.Base(wreal)
		if rel, err := filepath.Rel(base, wreal); err == nil && pathguard.Contains(base, wreal) {
			prefix = rel
		}
		err = filepath.WalkDir(wreal, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == wreal {
					return nil // nothing written there yet
				}
				errs = append(errs, fmt.Errorf("mirror: reading %s: %w", p, err))
				return nil
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(wreal, p)
			relDest := filepath.Join(prefix, rel)
			if prev, ok := claimed[relDest]; ok {
				if prev != p {
					res.Skipped = append(res.Skipped, Skip{Path: p, Reason: SkipConflict})
				}
				return nil
			}
			claimed[relDest] = p
			from, reason := sourceFile(wreal, p, d)
			if reason != "" {
				res.Skipped = append(res.Skipped, Skip{Path: p, Reason: reason})
				return nil
			}
			if from == "" {
				return nil // a link to a directory inside the root: walked as itself
			}
			copied, reason, err := copyOne(root, relDest, from)
			switch {
			case err != nil:
				errs = append(errs, err)
			case reason != "":
				res.Skipped = append(res.Skipped, Skip{Path: p, Reason: reason})
			case copied:
				res.Copied = append(res.Copied, relDest)
			default:
				res.Unchanged++
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("mirror: %w", err))
			break
		}
	}
	return errors.Join(errs...)
}

// sourceFile decides what to read for one entry of a write root: the file
// itself, or the real file a symlink leads to when that stays inside the
// root. It returns "" and no reason for a link to a directory inside the
// root, whose files the walk visits anyway.
func sourceFile(root, p string, d fs.DirEntry) (from string, skip SkipReason) {
	switch {
	case d.Type().IsRegular():
		return p, ""
	case d.Type()&fs.ModeSymlink == 0:
		return "", SkipNotRegular
	}
	_, real, err := pathguard.Resolve(p)
	if err != nil || !pathguard.Contains(root, real) {
		return "", SkipSourceLink
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return "", SkipSourceLink
	case fi.IsDir():
		return "", ""
	case !fi.Mode().IsRegular():
		return "", SkipNotRegular
	}
	return real, ""
}

// copyOne copies from into root/rel unless the target is already the same
// size and modification time. It reports a skip when the target's path
// leaves root through a symlink.
func copyOne(root, rel, from string) (copied bool, skip SkipReason, err error) {
	_, target, err := pathguard.Resolve(filepath.Join(root, rel))
	if err != nil {
		return false, "", fmt.Errorf("mirror: %s: %w", rel, err)
	}
	if target == root || !pathguard.Contains(root, target) {
		return false, SkipDestLink, nil
	}
	in, err := os.Open(from)
	if err != nil {
		return false, "", fmt.Errorf("mirror: %w", err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return false, "", fmt.Errorf("mirror: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return false, SkipNotRegular, nil
	}
	// The walk saw a regular file; if a link was swapped in before the
	// open, the opened file is not the one at the path any more.
	if lfi, err := os.Lstat(from); err != nil || !os.SameFile(lfi, fi) {
		return false, SkipSourceLink, nil
	}
	if old, err := os.Lstat(target); err == nil && old.Mode().IsRegular() && old.Size() == fi.Size() && old.ModTime().Equal(fi.ModTime()) {
		return false, "", nil
	}
	if err := writeAtomic(target, in, fi); err != nil {
		return false, "", fmt.Errorf("mirror: copying %s: %w", rel, err)
	}
	return true, "", nil
}

// tempMarker names the temporary files a sync writes beside their
// targets. A crash can leave one behind; since a mirror never deletes in
// the destination, it stays until the user removes it.
const tempMarker = ".mirror-tmp-"

// writeAtomic writes in's content to target through a temporary file in
// the same directory, synced before the rename, with the source's mode
// bits and modification time. The only thing it ever removes is its own
// temporary file, when the copy fails.
func writeAtomic(target string, in io.Reader, fi fs.FileInfo) (err error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+tempMarker+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = io.Copy(f, in); err != nil {
		return err
	}
	if err = f.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		return err
	}
	return os.Rename(tmp, target)
}
