package consent

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tranquil/automation/internal/atomicfile"
	"github.com/tranquil/automation/internal/filelock"
)

// MinKeyLen is the shortest key StoreOptions.Key may hold.
const MinKeyLen = 16

// keyFileLen is the size of a key the store makes itself.
const keyFileLen = 32

// ErrKey reports a key the store cannot use: a StoreOptions.Key shorter
// than MinKeyLen, or a key file that could be neither read nor made.
var ErrKey = errors.New("consent: unusable approval key")

// ErrUnverified reports a stored approval that failed verification:
// unsigned (written before approvals were signed), or with a signature that
// does not match (forged, tampered with, or made with another key). Such an
// approval counts as absent, so the user is asked again.
var ErrUnverified = errors.New("consent: a stored approval failed verification")

// defaultKeyFile is where a store keeps its key when the host supplies
// none: beside the store, so that whatever keeps scripts out of the
// store's folder keeps them out of the key too.
func defaultKeyFile(store string) string {
	return strings.TrimSuffix(store, filepath.Ext(store)) + ".key"
}

// loadKey returns the key in path, creating it (32 bytes from crypto/rand,
// hex, mode 0600) if there is none. Creation happens under the store's lock
// so that two processes opening one store at once agree on one key. A key
// file that does not hold a key is moved aside and replaced: every stored
// approval then fails verification and is asked about again, which is the
// safe way to fail. So is one with a second hard link: a link placed in a
// folder a script may read would hand it the key, and a script cannot
// make one, so whatever did is not to be trusted.
func loadKey(path, lock string, log *slog.Logger, now func() time.Time) ([]byte, error) {
	if k, err := readKey(path); err == nil {
		return k, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unlock, err := filelock.Lock(ctx, lock)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	defer unlock()
	k, err := readKey(path)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		aside := fmt.Sprintf("%s.corrupt-%s", path, now().UTC().Format("20060102T150405.000000000Z"))
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("%w: %s: %v, and it could not be moved aside: %v", ErrKey, path, err, rerr)
		}
		log.Warn("consent key file was unusable or linked elsewhere; moved it aside and made a new key, so every script will ask again",
			"path", path, "moved_to", aside, "error", err)
	}
	k = make([]byte, keyFileLen)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	if err := atomicfile.WriteFile(path, []byte(hex.EncodeToString(k)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return k, nil
}

func readKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && linkCount(fi) > 1 {
		return nil, fmt.Errorf("%w: %s has %d hard links", ErrKey, path, linkCount(fi))
	}
	k, err := hex.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(k) < MinKeyLen {
		return nil, fmt.Errorf("%w: %s does not hold a key", ErrKey, path)
	}
	return k, nil
}

// macDomain separates approval signatures from any other use of the key.
const macDomain = "tranquil consent approval v2"

// sign returns the HMAC-SHA256 of an approval: the script it is for, the
// header and the time, each length-prefixed so no two approvals share an
// input. Binding the script means an entry cannot be moved to another.
func sign(key []byte, script, header string, at time.Time) []byte {
	m := hmac.New(sha256.New, key)
	var n [binary.MaxVarintLen64]byte
	for _, field := range []string{macDomain, script, header, at.UTC().Format(time.RFC3339Nano)} {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(field)))])
		m.Write([]byte(field))
	}
	return m.Sum(nil)
}

// verify reports whether mac (hex) is the signature of the approval.
func verify(key []byte, script, header string, at time.Time, mac string) bool {
	got, err := hex.DecodeString(mac)
	return err == nil && hmac.Equal(got, sign(key, script, header, at))
}
