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
// dir, whose shared cache is shared:
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
func storeOrigin(dir, shared string, h *permissions.Header) error {
	key := originKey(h)
	kept := filepath.Join(shared, "location_data", key)
	if err := os.MkdirAll(kept, 0o700); err != nil {
		return err
	}
	local := filepath.Join(dir, "location_data")
	if err := os.MkdirAll(filepath.Join(local, "web_cache"), 0o700); err != nil {
		return err
	}
	if !symlink(kept, filepath.Join(local, key)) {
		// Where a user cannot make symlinks (Windows without the
		// privilege), the store's files are hard links: writes into
		// them are kept, files deno makes anew (a journal) are not.
		if err := linkTree(filepath.Join(local, key), kept); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(local, "web_cache", key), []byte(webCacheNote), 0o600); err != nil {
		return err
	}
	old := filepath.Join(shared, "location_data", "web_cache", key)
	if fi, err := os.Lstat(old); err == nil && fi.IsDir() {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("removing the Cache API an older version left: %w", err)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
