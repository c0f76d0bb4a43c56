package consent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// revocations subscribes to s and returns the channel the revocations
// arrive on.
func revocations(t *testing.T, s *Store) <-chan Revocation {
	t.Helper()
	ch := make(chan Revocation, 16)
	stop := s.OnRevoke(func(r Revocation) { ch <- r })
	t.Cleanup(stop)
	return ch
}

func nextRevocation(t *testing.T, ch <-chan Revocation) Revocation {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no revocation arrived")
		return Revocation{}
	}
}

// TestRevokeFromAnotherProcessReachesSubscribers revokes with a second
// process (this test binary re-executed), as a command-line revoke or a
// second host on the same data directory does.
func TestRevokeFromAnotherProcessReachesSubscribers(t *testing.T) {
	if os.Getenv("CONSENT_REVOKE_STORE") != "" {
		return
	}
	f := newFixture(t)
	ctx := context.Background()
	path, h := f.script(t, "job.ts", "browser")
	other, _ := f.script(t, "other.ts", "browser")
	s, err := OpenStore(f.store.Path(), StoreOptions{WatchInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	ch := revocations(t, s)
	_, err = NewGate(s, &recorder{answers: []Answer{Approve}}).Authorize(ctx, path, h)
	require.NoError(t, err)
	_, err = f.store.Approve(ctx, other, h.Canonical())
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^TestConsentRevokeHelper$")
	cmd.Env = append(os.Environ(), "CONSENT_REVOKE_STORE="+s.Path(), "CONSENT_REVOKE_SCRIPT="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, Revocation{Script: path}, nextRevocation(t, ch))

	// An approval made elsewhere after subscribing is watched too.
	_, err = f.store.Revoke(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, Revocation{Script: other}, nextRevocation(t, ch))
	select {
	case r := <-ch:
		t.Fatalf("a second report: %v", r)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestConsentRevokeHelper(t *testing.T) {
	storePath := os.Getenv("CONSENT_REVOKE_STORE")
	if storePath == "" {
		return // only meaningful when re-executed
	}
	s, err := OpenStore(storePath, StoreOptions{})
	require.NoError(t, err)
	ok, err := s.Revoke(context.Background(), os.Getenv("CONSENT_REVOKE_SCRIPT"))
	require.NoError(t, err)
	require.True(t, ok)
}

func TestWatcherStopsWithTheLastSubscriber(t *testing.T) {
	f := newFixture(t)
	s, err := OpenStore(filepath.Join(f.dir, "w", "consent.json"), StoreOptions{WatchInterval: 10 * time.Millisecond})
	require.NoError(t, err)
	stop1 := s.OnRevoke(func(Revocation) {})
	stop2 := s.OnRevoke(func(Revocation) {})
	s.mu.Lock()
	w := s.watch
	s.mu.Unlock()
	require.NotNil(t, w)
	stop1()
	select {
	case <-w.done:
		t.Fatal("stopped with a subscriber left")
	default:
	}
	stop2()
	select {
	case <-w.done:
	default:
		t.Fatal("the watcher outlived its last subscriber")
	}
	stop2() // twice is harmless
}
