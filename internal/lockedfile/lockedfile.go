package lockedfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/tranquil/automation/internal/atomicfile"
	"github.com/tranquil/automation/internal/filelock"
)

// File describes one shared file and how its value is coded. Every field
// but Logger and Now is required.
type File[T any] struct {
	Path string
	// Decode parses the file; an error marks it corrupt. Encode renders it.
	Decode func([]byte) (T, error)
	Encode func(T) ([]byte, error)
	// Empty makes the value of a missing or corrupt file.
	Empty func() T
	// Corrupt is the sentinel that errors about an unusable file wrap.
	Corrupt error
	// Warning is the log message when a corrupt file is moved aside; it
	// should say what that means for the user.
	Warning string
	Logger  *slog.Logger
	Now     func() time.Time
}

// Load returns the file's value. A corrupt or unreadable file is moved
// aside and reads as empty; the error is set only when moving it failed.
func (f *File[T]) Load(ctx context.Context) (T, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return f.Empty(), nil
	}
	if err == nil {
		v, derr := f.Decode(data)
		if derr == nil {
			return v, nil
		}
		err = derr
	}
	unlock, lerr := filelock.Lock(ctx, f.lockPath())
	if lerr != nil {
		return f.Empty(), lerr
	}
	defer unlock()
	return f.Empty(), f.quarantineLocked(err)
}

// Update applies change to a freshly read value under the lock and writes
// the result back when change reports a modification.
func (f *File[T]) Update(ctx context.Context, change func(T) (T, bool)) error {
	unlock, err := filelock.Lock(ctx, f.lockPath())
	if err != nil {
		return err
	}
	defer unlock()
	v := f.Empty()
	data, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err == nil:
		if v, err = f.Decode(data); err != nil {
			if qerr := f.quarantineLocked(err); qerr != nil {
				return qerr
			}
			v = f.Empty()
		}
	default:
		if qerr := f.quarantineLocked(err); qerr != nil {
			return qerr
		}
	}
	v, changed := change(v)
	if !changed {
		return nil
	}
	out, err := f.Encode(v)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(f.Path, out, 0o600)
}

// quarantineLocked moves an unusable file aside. The caller holds the
// lock, so it cannot move a file another writer just replaced; a file that
// decodes by now is left alone.
func (f *File[T]) quarantineLocked(cause error) error {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		if _, derr := f.Decode(data); derr == nil {
			return nil
		}
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	aside := fmt.Sprintf("%s.corrupt-%s", f.Path, now().UTC().Format("20060102T150405.000000000Z"))
	if rerr := os.Rename(f.Path, aside); rerr != nil {
		return fmt.Errorf("%w (%v), and it could not be moved aside: %v", f.Corrupt, cause, rerr)
	}
	log := f.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn(f.Warning, "path", f.Path, "moved_to", aside, "error", cause)
	return nil
}

func (f *File[T]) lockPath() string { return f.Path + ".lock" }
