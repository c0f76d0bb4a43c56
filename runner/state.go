package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/tranquil/automation/internal/atomicfile"
	"github.com/tranquil/automation/internal/filelock"
	"github.com/tranquil/automation/rpc/capnweb"
)

// Limits of per-script state.
const (
	maxStateKey  = 256
	maxStateFile = 4 << 20
)

// ErrStateValue reports a config value that cannot be stored: state holds
// JSON (null, booleans, finite numbers, strings, arrays, plain objects).
var ErrStateValue = errors.New("runner: config values must be plain JSON")

// errStateFull: a script's config values together would exceed
// maxStateFile.
var errStateFull = fmt.Errorf("%w: the script's config is full", ErrStateValue)

// stateStore keeps each script's config in its own file under dir, named by
// a hash of the script's real path. It is never the host's own config.
type stateStore struct {
	dir string
	mu  sync.Mutex // serialises this process's writers; the file lock covers others
}

type stateFile struct {
	Script string                     `json:"script"`
	Values map[string]json.RawMessage `json:"values"`
}

func (s *stateStore) path(script string) string {
	sum := sha256.Sum256([]byte(script))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".json")
}

func (s *stateStore) load(script string) (stateFile, error) {
	f := stateFile{Script: script, Values: map[string]json.RawMessage{}}
	data, err := os.ReadFile(s.path(script))
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("runner: reading script state: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Script != script {
		// Unreadable state is set aside rather than trusted or lost.
		aside := s.path(script) + ".corrupt"
		_ = os.Rename(s.path(script), aside)
		return stateFile{Script: script, Values: map[string]json.RawMessage{}}, nil
	}
	if f.Values == nil {
		f.Values = map[string]json.RawMessage{}
	}
	return f, nil
}

func (s *stateStore) get(script, key string) (json.RawMessage, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	f, err := s.load(script)
	if err != nil {
		return nil, false, err
	}
	v, ok := f.Values[key]
	return v, ok, nil
}

func (s *stateStore) keys(script string) ([]string, error) {
	f, err := s.load(script)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(f.Values))
	for k := range f.Values {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

// update changes one key (nil value deletes it) under both locks.
func (s *stateStore) update(ctx context.Context, script, key string, value json.RawMessage) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	unlock, err := filelock.Lock(ctx, s.path(script)+".lock")
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	defer unlock()
	f, err := s.load(script)
	if err != nil {
		return err
	}
	if value == nil {
		delete(f.Values, key)
	} else {
		f.Values[key] = value
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if len(data) > maxStateFile {
		return fmt.Errorf("%w: its values together would exceed %d bytes; delete some first", errStateFull, maxStateFile)
	}
	return atomicfile.WriteFile(s.path(script), data, 0o600)
}

func checkKey(key string) error {
	if key == "" || len(key) > maxStateKey || !utf8.ValidString(key) {
		return fmt.Errorf("%w: a key must be 1 to %d bytes of text", ErrStateValue, maxStateKey)
	}
	return nil
}

// encodePlain encodes v, a value a script sent, as JSON.stringify would,
// if it is plain JSON: an undefined member of an object is left out and an
// undefined element of an array is null, as there; anything else JSON
// cannot hold (NaN, a bigint, a Date, undefined alone) is refused, and the
// error, in the script's terms, says what.
func encodePlain(v any) (json.RawMessage, error) {
	if err := checkPlain(v, 0); err != nil {
		return nil, err
	}
	return capnweb.MarshalJSON(v)
}

func checkPlain(v any, depth int) error {
	if depth > 64 {
		return errors.New("nested too deeply")
	}
	switch x := v.(type) {
	case nil, bool, string:
		return nil
	case capnweb.Undefined:
		if depth > 0 {
			return nil
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a JSON number", x)
		}
		return nil
	case int, int64, int32, uint, uint64, uint32:
		return nil
	case []any:
		for _, e := range x {
			if err := checkPlain(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for _, e := range x {
			if err := checkPlain(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *capnweb.Object:
		for _, e := range x.All() {
			if err := checkPlain(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s is not plain JSON", capnweb.TypeName(v))
}
