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

// sealWebCache switches the Cache API off for runs of h. Deno 2.9 keeps
// the Cache API of an origin in <DENO_DIR>/location_data/web_cache/<hex
// SHA-256 of the origin> and enforces no quota on it, so a script without
// any write= grant could fill the disk under the host's data dir. A
// regular file in that place makes deno refuse to open the cache, in the
// script and in every worker it starts (the bootstrap also removes
// globalThis.caches, but a worker gets a fresh one). Only the script's
// own origin is touched (see permissions.Location), never another deno
// program's. A directory left there by an older version is removed.
func sealWebCache(denoDir string, h *permissions.Header) error {
	origin := strings.TrimSuffix(permissions.Location(h), "/")
	sum := sha256.Sum256([]byte(origin))
	p := filepath.Join(denoDir, "location_data", "web_cache", hex.EncodeToString(sum[:]))
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return nil
	case err == nil:
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("%w: %w", ErrStorage, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if err := os.WriteFile(p, []byte(webCacheNote), 0o600); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return nil
}
