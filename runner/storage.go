package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tranquil/automation/permissions"
)

// ErrStorage reports that a run's storage could not be set up as the
// sandbox needs it.
var ErrStorage = errors.New("runner: cannot set up the run's storage")

// webCacheNote is what the file blocking a script's Cache API says to
// whoever finds it.
const webCacheNote = "This file switches the Cache API off for one automation script:\n" +
	"deno would keep that cache here with no size limit. See package runner.\n"

// originKey is the name deno 2.9 gives the folders of an origin's storage
// under <DENO_DIR>/location_data: the hex SHA-256 of the origin. A run's
// origin is its script's own (see permissions.Location).
func originKey(h *permissions.Header) string {
	sum := sha256.Sum256([]byte(strings.TrimSuffix(permissions.Location(h), "/")))
	return hex.EncodeToString(sum[:])
}

// storeOrigin sets up the origin-bound storage of a run of h in its cache
// dir, whose shared cache is shared (link false copies the store, as
// where symlinks cannot be made):
//
//   - localStorage, which deno keeps in location_data/<key> and caps at
//     10 MiB an origin, is the script's to keep between runs: the run's
//     location_data/<key> is a link to the shared cache's, made if need
//     be. Only the script's own origin is linked.
//   - The Cache API is switched off. Deno keeps it in
//     location_data/web_cache/<key> with no size limit; a regular file in
//     that place makes deno refuse to open it, in the script and in every
//     worker it starts (the bootstrap also removes globalThis.caches, but
//     a worker gets a fresh one). A Cache API an older version left in the
//     shared cache is removed.
func storeOrigin(dir, shared string, h *permissions.Header, link bool) (*storeCopy, error) {
	key := originKey(h)
	kept := filepath.Join(shared, "location_data", key)
	if err := os.MkdirAll(kept, 0o700); err != nil {
		return nil, err
	}
	local := filepath.Join(dir, "location_data")
	if err := os.MkdirAll(filepath.Join(local, "web_cache"), 0o700); err != nil {
		return nil, err
	}
	var copied *storeCopy
	if !link || !symlink(kept, filepath.Join(local, key)) {
		// Where a user cannot make symlinks (Windows without the
		// privilege), the run gets a copy of the store, and the copy
		// goes back when the run ends: hard links would keep writes
		// into the files, but lose those deno makes anew (its journal,
		// a database it replaces).
		copied = &storeCopy{local: filepath.Join(local, key), kept: kept}
		if err := copyTree(copied.local, kept); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(local, "web_cache", key), []byte(webCacheNote), 0o600); err != nil {
		return nil, err
	}
	old := filepath.Join(shared, "location_data", "web_cache", key)
	if fi, err := os.Lstat(old); err == nil && fi.IsDir() {
		if err := os.RemoveAll(old); err != nil {
			return nil, fmt.Errorf("removing the Cache API an older version left: %w", err)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return copied, nil
}

// storeCopy is a script's localStorage copied into a run's folder (local)
// from where it is kept between runs (kept).
type storeCopy struct{ local, kept string }

// keep puts the run's copy in the kept store's place: copied beside it,
// then swapped in by renames, so a store is whole at every moment. Two
// runs of one script at once each keep their own; the last to end wins,
// where a linked store would have had both runs' writes.
func (s *storeCopy) keep() error {
	next, prev := s.kept+".next", s.kept+".prev"
	for _, p := range []string{next, prev} {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	if err := copyTree(next, s.local); err != nil {
		return err
	}
	if err := os.Rename(s.kept, prev); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(next, s.kept); err != nil {
		return err
	}
	return os.RemoveAll(prev)
}

// copyTree copies the folders and regular files of src to dst, made anew.
func copyTree(dst, src string) error {
	return eachFile(dst, src, func(to, from string) error { return copyFile(from, to) })
}
