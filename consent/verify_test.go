package consent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawStore reads the store file as JSON, for tests that tamper with it.
func rawStore(t *testing.T, s *Store) map[string]any {
	t.Helper()
	data, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	var f map[string]any
	require.NoError(t, json.Unmarshal(data, &f))
	return f
}

func writeRaw(t *testing.T, s *Store, f map[string]any) {
	t.Helper()
	data, err := json.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path(), data, 0o600))
}

// TestForgedApprovalsAreRejected writes approvals into the store file the
// way a script that could write there would: a new entry with no
// signature or a made-up one, a signed entry moved to another script, and
// a signed entry with its header widened. None approves anything; each is
// reported, the user is asked again, and the genuine entry stands.
func TestForgedApprovalsAreRejected(t *testing.T) {
	ctx := context.Background()
	for name, forge := range map[string]func(approvals map[string]any, victim, genuine string, header string){
		"no signature": func(a map[string]any, victim, _, header string) {
			a[victim] = map[string]any{"header": header, "approved_at": "2026-01-01T00:00:00Z"}
		},
		"made-up signature": func(a map[string]any, victim, _, header string) {
			a[victim] = map[string]any{"header": header, "approved_at": "2026-01-01T00:00:00Z", "mac": strings.Repeat("ab", 32)}
		},
		"signature of another entry": func(a map[string]any, victim, genuine, header string) {
			e := a[genuine].(map[string]any)
			a[victim] = map[string]any{"header": e["header"], "approved_at": e["approved_at"], "mac": e["mac"]}
		},
		"widened header": func(a map[string]any, victim, _, header string) {
			e := a[victim].(map[string]any)
			e["header"] = header
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			genuine, gh := f.script(t, "genuine.ts", "clipboard")
			_, err := f.store.Approve(ctx, genuine, gh.Canonical())
			require.NoError(t, err)
			victim, vh := f.script(t, "victim.ts", "browser run=bash")
			// The widened-header forgery starts from a real, narrower approval.
			_, err = f.store.Approve(ctx, victim, "browser")
			require.NoError(t, err)

			raw := rawStore(t, f.store)
			forge(raw["approvals"].(map[string]any), victim, genuine, vh.Canonical())
			writeRaw(t, f.store, raw)

			_, ok, err := f.store.Get(ctx, victim)
			require.ErrorIs(t, err, ErrUnverified)
			assert.False(t, ok)
			assert.Contains(t, err.Error(), victim)
			a, ok, err := f.store.Get(ctx, genuine)
			require.NoError(t, err, "the other approvals stand")
			require.True(t, ok)
			assert.Equal(t, gh.Canonical(), a.Header)
			list, err := f.store.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1, "List shows only verified approvals")

			p := &recorder{answers: []Answer{Deny}}
			_, err = NewGate(f.store, p).Authorize(ctx, victim, vh)
			require.ErrorIs(t, err, ErrDenied, "the forged approval did not let the run through")
			require.Equal(t, 1, p.count(), "the user was asked")
			require.ErrorIs(t, p.reqs[0].Unverified, ErrUnverified, "and told why")
			assert.Equal(t, 1, strings.Count(f.logs.String(), "failed verification"), "reported once:\n%s", f.logs.String())
			assert.NotContains(t, f.logs.String(), "moved it aside", "a forged entry is not a corrupt file")
		})
	}
}

func TestApprovalAfterForgeryReplacesIt(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	victim, vh := f.script(t, "victim.ts", "browser run=bash")
	writeRaw(t, f.store, map[string]any{"version": 2, "approvals": map[string]any{
		victim: map[string]any{"header": vh.Canonical(), "approved_at": "2026-01-01T00:00:00Z", "mac": strings.Repeat("00", 32)},
	}})
	p := &recorder{answers: []Answer{Approve}}
	d, err := NewGate(f.store, p).Authorize(ctx, victim, vh)
	require.NoError(t, err)
	assert.True(t, d.Prompted)
	assert.ErrorIs(t, d.Warning, ErrUnverified, "the host hears of it too")
	a, ok, err := f.store.Get(ctx, victim)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, vh.Canonical(), a.Header)
	d, err = NewGate(f.store, p).Authorize(ctx, victim, vh)
	require.NoError(t, err)
	assert.False(t, d.Prompted, "the user's own approval verifies")
}

// TestUnsignedStoreAsksAgain opens a store written before approvals were
// signed: its approvals are kept as a record but approve nothing, and the
// first write replaces the file with a signed one.
func TestUnsignedStoreAsksAgain(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	other, _ := f.script(t, "other.ts", "clipboard")
	content := fmt.Sprintf(`{"version":1,"approvals":{%q:{"header":%q,"approved_at":"2026-01-01T00:00:00Z"},%q:{"header":"clipboard","approved_at":"2026-01-01T00:00:00Z"}}}`, path, h.Canonical(), other)
	require.NoError(t, os.WriteFile(f.store.Path(), []byte(content), 0o600))

	_, ok, err := f.store.Get(ctx, path)
	require.ErrorIs(t, err, ErrUnverified)
	assert.False(t, ok)
	assert.Contains(t, err.Error(), "unsigned")
	p := &recorder{answers: []Answer{Approve}}
	d, err := NewGate(f.store, p).Authorize(ctx, path, h)
	require.NoError(t, err)
	assert.True(t, d.Prompted)
	assert.True(t, p.reqs[0].FirstRun)

	raw := rawStore(t, f.store)
	assert.EqualValues(t, 2, raw["version"])
	approvals := raw["approvals"].(map[string]any)
	assert.Contains(t, approvals, path)
	assert.NotContains(t, approvals, other, "an unsigned entry is dropped at the next write")
	assert.Empty(t, mustGlob(t, f.store.Path()+".corrupt-*"), "an old store is not corrupt")
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	require.NoError(t, err)
	return m
}

func TestHostSuppliedKey(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	storePath := filepath.Join(f.dir, "host", "consent.json")
	key := bytes.Repeat([]byte{7}, 32)
	s, err := OpenStore(storePath, StoreOptions{Key: key})
	require.NoError(t, err)
	assert.Empty(t, s.KeyFile())
	assert.Empty(t, mustGlob(t, filepath.Join(f.dir, "host", "*.key")), "no key file when the host holds the key")
	assert.Equal(t, []string{storePath, storePath + ".lock"}, s.Protected())
	key[0] = 8 // the store keeps its own copy
	_, err = s.Approve(ctx, path, h.Canonical())
	require.NoError(t, err)

	same, err := OpenStore(storePath, StoreOptions{Key: bytes.Repeat([]byte{7}, 32)})
	require.NoError(t, err)
	_, ok, err := same.Get(ctx, path)
	require.NoError(t, err)
	assert.True(t, ok)

	logs := &bytes.Buffer{}
	other, err := OpenStore(storePath, StoreOptions{Key: bytes.Repeat([]byte{9}, 32), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	_, ok, err = other.Get(ctx, path)
	require.ErrorIs(t, err, ErrUnverified, "another key verifies nothing")
	assert.False(t, ok)
	assert.Contains(t, logs.String(), "signed with another key")

	_, err = OpenStore(storePath, StoreOptions{Key: []byte("short")})
	require.ErrorIs(t, err, ErrKey)
	_, err = OpenStore(storePath, StoreOptions{KeyFile: "relative.key"})
	require.ErrorIs(t, err, ErrKey)
}

func TestBrokenKeyFileIsReplaced(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	_, err := f.store.Approve(ctx, path, h.Canonical())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.store.KeyFile(), []byte("not a key\n"), 0o600))

	logs := &bytes.Buffer{}
	s, err := OpenStore(f.store.Path(), StoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err, "a broken key file does not stop the host")
	assert.Contains(t, logs.String(), "key file was unusable")
	assert.Len(t, mustGlob(t, f.store.KeyFile()+".corrupt-*"), 1, "the broken file is kept aside")
	_, ok, err := s.Get(ctx, path)
	require.ErrorIs(t, err, ErrUnverified, "approvals signed with the lost key ask again")
	assert.False(t, ok)
}

func TestConcurrentOpensAgreeOnOneKey(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	storePath := filepath.Join(dir, "fresh", "consent.json")
	stores := make([]*Store, 8)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := OpenStore(storePath, StoreOptions{})
			assert.NoError(t, err)
			stores[i] = s
		}()
	}
	wg.Wait()
	for _, s := range stores[1:] {
		require.Equal(t, stores[0].key, s.key)
	}
	_, err = stores[3].Approve(context.Background(), filepath.Join(dir, "a.ts"), "browser")
	require.NoError(t, err)
	_, ok, err := stores[5].Get(context.Background(), filepath.Join(dir, "a.ts"))
	require.NoError(t, err)
	assert.True(t, ok)
}

// TestHardLinkedKeyIsReplaced: a hard link to the key elsewhere (where a
// script might read it) retires the key at the next open.
func TestHardLinkedKeyIsReplaced(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links to the key are looked for on Unix only")
	}
	ctx := context.Background()
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	_, err := f.store.Approve(ctx, path, h.Canonical())
	require.NoError(t, err)
	planted := filepath.Join(f.dir, "scripts", "granted-folder-key")
	require.NoError(t, os.Link(f.store.KeyFile(), planted))

	logs := &bytes.Buffer{}
	s, err := OpenStore(f.store.Path(), StoreOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "hard links")
	old, err := os.ReadFile(planted)
	require.NoError(t, err)
	now, err := os.ReadFile(s.KeyFile())
	require.NoError(t, err)
	assert.NotEqual(t, string(old), string(now), "the linked key is retired")
	_, ok, err := s.Get(ctx, path)
	require.ErrorIs(t, err, ErrUnverified)
	assert.False(t, ok)
}
