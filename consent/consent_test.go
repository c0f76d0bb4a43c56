package consent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/internal/winetest"
	"github.com/tranquil/automation/permissions"
)

// fixture is a temporary tree with a store and scripts.
type fixture struct {
	dir   string
	store *Store
	logs  *bytes.Buffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	logs := &bytes.Buffer{}
	s, err := OpenStore(filepath.Join(dir, "state", "consent.json"), StoreOptions{
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, nil)),
	})
	require.NoError(t, err)
	return &fixture{dir: dir, store: s, logs: logs}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// script writes a script with the given header line and parses it.
func (f *fixture) script(t *testing.T, name, header string) (string, *permissions.Header) {
	t.Helper()
	p := filepath.Join(f.dir, "scripts", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	src := []byte("// @permissions " + header + "\nconsole.log(1)\n")
	require.NoError(t, os.WriteFile(p, src, 0o644))
	h, err := permissions.Parse(src, p)
	require.NoError(t, err)
	return p, h
}

// recorder is a Prompter that answers from a queue and records requests.
type recorder struct {
	mu      sync.Mutex
	answers []Answer
	reqs    []Request
}

func (r *recorder) Ask(_ context.Context, req Request) (Answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if len(r.answers) == 0 {
		return Deny, errors.New("unexpected prompt")
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return a, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func TestAuthorizeFlow(t *testing.T) {
	testenv.CheckGoroutines(t)
	f := newFixture(t)
	ctx := context.Background()
	p := &recorder{answers: []Answer{Approve, Approve, Deny}}
	g := NewGate(f.store, p)
	path, h := f.script(t, "job.ts", "browser net=a.example write=out.md")

	// First run: asked, with every grant listed as added.
	d, err := g.Authorize(ctx, path, h)
	require.NoError(t, err)
	assert.Equal(t, Decision{Prompted: true, FirstRun: true}, d)
	require.Equal(t, 1, p.count())
	req := p.reqs[0]
	assert.True(t, req.FirstRun)
	assert.Equal(t, path, req.Script)
	assert.Len(t, req.Grants, 3)
	assert.Equal(t, req.Grants, req.Added)
	assert.Empty(t, req.Removed)
	assert.Empty(t, req.Previous)

	// Unchanged: no prompt.
	d, err = g.Authorize(ctx, path, h)
	require.NoError(t, err)
	assert.Equal(t, Decision{}, d)
	assert.Equal(t, 1, p.count())

	// Changed: asked with the diff.
	path, h2 := f.script(t, "job.ts", "browser net=a.example,b.example run=git")
	d, err = g.Authorize(ctx, path, h2)
	require.NoError(t, err)
	assert.Equal(t, Decision{Prompted: true}, d)
	require.Equal(t, 2, p.count())
	req = p.reqs[1]
	assert.False(t, req.FirstRun)
	assert.Equal(t, h.Canonical(), req.Previous)
	assert.Equal(t, []string{"can connect to b.example", "can run commands as you, with your full access: git"}, texts(req.Added))
	assert.Equal(t, []string{"can create, change and delete " + filepath.Join(filepath.Dir(path), "out.md") + " (and everything inside, if it is or becomes a folder)"}, texts(req.Removed))

	// Changed again and denied: refused, approval unchanged.
	path, h3 := f.script(t, "job.ts", "browser clipboard")
	_, err = g.Authorize(ctx, path, h3)
	require.ErrorIs(t, err, ErrDenied)
	a, ok, err := f.store.Get(ctx, path)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, h2.Canonical(), a.Header)
}

func texts(ds []permissions.Description) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Text)
	}
	return out
}

func TestNoneNeedsNoPrompt(t *testing.T) {
	f := newFixture(t)
	p := &recorder{}
	g := NewGate(f.store, p)
	path, h := f.script(t, "none.ts", "none")
	d, err := g.Authorize(context.Background(), path, h)
	require.NoError(t, err)
	assert.Equal(t, Decision{}, d)
	assert.Zero(t, p.count())
}

func TestPrompterErrorRefuses(t *testing.T) {
	f := newFixture(t)
	g := NewGate(f.store, PrompterFunc(func(context.Context, Request) (Answer, error) {
		return Approve, errors.New("window closed")
	}))
	path, h := f.script(t, "job.ts", "browser")
	_, err := g.Authorize(context.Background(), path, h)
	require.ErrorIs(t, err, ErrDenied)
	assert.Contains(t, err.Error(), "window closed")
	_, ok, _ := f.store.Get(context.Background(), path)
	assert.False(t, ok)
}

func TestConcurrentAuthorizeSharesOnePrompt(t *testing.T) {
	testenv.CheckGoroutines(t)
	f := newFixture(t)
	release := make(chan struct{})
	var calls atomic.Int32
	g := NewGate(f.store, PrompterFunc(func(ctx context.Context, _ Request) (Answer, error) {
		calls.Add(1)
		<-release
		return Approve, nil
	}))
	path, h := f.script(t, "job.ts", "browser")
	var wg sync.WaitGroup
	results := make([]Decision, 10)
	errs := make([]error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = g.Authorize(context.Background(), path, h)
		}()
	}
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, fl := range g.inflight {
			return fl.waiters == 10
		}
		return false
	}, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), calls.Load())
	for i := range 10 {
		require.NoError(t, errs[i])
		assert.True(t, results[i].Prompted)
	}
}

func TestAbandonedPromptIsCancelled(t *testing.T) {
	testenv.CheckGoroutines(t)
	f := newFixture(t)
	cancelled := make(chan struct{})
	g := NewGate(f.store, PrompterFunc(func(ctx context.Context, _ Request) (Answer, error) {
		<-ctx.Done()
		close(cancelled)
		return Deny, ctx.Err()
	}))
	path, h := f.script(t, "job.ts", "browser")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := g.Authorize(ctx, path, h)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the prompt was not taken down when nobody waited for it")
	}
}

func TestKeyedByRealPath(t *testing.T) {
	winetest.RequireSymlinks(t)
	f := newFixture(t)
	ctx := context.Background()
	path, h := f.script(t, "job.ts", "browser")
	link := filepath.Join(f.dir, "link.ts")
	require.NoError(t, os.Symlink(path, link))
	_, err := f.store.Approve(ctx, link, h.Canonical())
	require.NoError(t, err)
	a, ok, err := f.store.Get(ctx, path)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, path, a.Script)
	all, err := f.store.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 1)
}

// privateMode is what Stat reports for a file only its owner may use:
// 0600 on Unix; on Windows, where Go reports only the read-only bit (a
// writable file is 0666), privacy comes from the folder's ACL.
var privateMode = map[bool]os.FileMode{true: 0o666, false: 0o600}[runtime.GOOS == "windows"]

func TestStoreFileIsPrivateAndAtomic(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	path, h := f.script(t, "job.ts", "browser")
	_, err := f.store.Approve(ctx, path, h.Canonical())
	require.NoError(t, err)
	fi, err := os.Stat(f.store.Path())
	require.NoError(t, err)
	assert.Equal(t, privateMode, fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(f.store.Path()))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"consent.json", "consent.json.lock", "consent.key"}, names)
	fi, err = os.Stat(f.store.KeyFile())
	require.NoError(t, err)
	assert.Equal(t, privateMode, fi.Mode().Perm(), "the key file is private too")
	assert.ElementsMatch(t, []string{f.store.Path(), f.store.Path() + ".lock", f.store.KeyFile()}, f.store.Protected())
}

func TestApproveRefusesNonCanonical(t *testing.T) {
	f := newFixture(t)
	path, _ := f.script(t, "job.ts", "browser")
	_, err := f.store.Approve(context.Background(), path, "teleport")
	require.Error(t, err)
}

func TestTornTempFileIsIgnored(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	path, h := f.script(t, "job.ts", "browser")
	_, err := f.store.Approve(ctx, path, h.Canonical())
	require.NoError(t, err)
	// A crash mid-write leaves a half-written temporary file beside the
	// store; it must neither be read nor disturb later writes.
	torn := filepath.Join(filepath.Dir(f.store.Path()), ".consent.json.tmp-4242")
	require.NoError(t, os.WriteFile(torn, []byte(`{"version":1,"approvals":{"/x":{"hea`), 0o600))
	a, ok, err := f.store.Get(ctx, path)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, h.Canonical(), a.Header)
	other, h2 := f.script(t, "other.ts", "clipboard")
	_, err = f.store.Approve(ctx, other, h2.Canonical())
	require.NoError(t, err)
	all, err := f.store.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2)
	assert.Empty(t, f.logs.String(), "nothing to warn about")
}

func TestCorruptStoreIsMovedAsideAndPromptsAgain(t *testing.T) {
	good := `{"version":1,"approvals":{}}`
	corruptions := map[string]string{
		"garbage":         "not json at all",
		"empty":           "",
		"truncated":       `{"version":1,"approvals":{"/a.ts":{"header":"browser"`,
		"wrong version":   `{"version":99,"approvals":{}}`,
		"relative key":    `{"version":1,"approvals":{"a.ts":{"header":"browser","approved_at":"2026-01-01T00:00:00Z"}}}`,
		"unclean key":     `{"version":1,"approvals":{"/x/../a.ts":{"header":"browser","approved_at":"2026-01-01T00:00:00Z"}}}`,
		"bad header":      `{"version":1,"approvals":{"/a.ts":{"header":"teleport","approved_at":"2026-01-01T00:00:00Z"}}}`,
		"unknown field":   `{"version":1,"approvals":{},"admin":true}`,
		"trailing data":   good + good,
		"wrong type":      `{"version":"1","approvals":[]}`,
		"binary":          "\x00\xff\xfe",
		"null approvals?": `null`,
	}
	for name, content := range corruptions {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			path, h := f.script(t, "job.ts", "browser")
			require.NoError(t, os.WriteFile(f.store.Path(), []byte(content), 0o600))
			p := &recorder{answers: []Answer{Approve}}
			d, err := NewGate(f.store, p).Authorize(context.Background(), path, h)
			require.NoError(t, err)
			assert.True(t, d.Prompted)
			assert.True(t, d.FirstRun)
			assert.Contains(t, f.logs.String(), "moved it aside")
			aside, err := filepath.Glob(f.store.Path() + ".corrupt-*")
			require.NoError(t, err)
			require.Len(t, aside, 1)
			kept, err := os.ReadFile(aside[0])
			require.NoError(t, err)
			assert.Equal(t, content, string(kept), "the corrupt file is kept, not lost")
			a, ok, err := f.store.Get(context.Background(), path)
			require.NoError(t, err)
			require.True(t, ok, "the new approval is stored in a fresh file")
			assert.Equal(t, h.Canonical(), a.Header)
		})
	}
}

func TestCorruptStoreWithMatchingEntryStillPrompts(t *testing.T) {
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	content := fmt.Sprintf(`{"version":1,"approvals":{%q:{"header":%q,"approved_at":"2026-01-01T00:00:00Z"},"rel":{"header":"none"}}}`, path, h.Canonical())
	require.NoError(t, os.WriteFile(f.store.Path(), []byte(content), 0o600))
	p := &recorder{answers: []Answer{Deny}}
	_, err := NewGate(f.store, p).Authorize(context.Background(), path, h)
	require.ErrorIs(t, err, ErrDenied)
	assert.Equal(t, 1, p.count(), "a corrupt file never approves silently")
}

func TestUnreadableStoreIsMovedAside(t *testing.T) {
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	// A directory where the file should be cannot be read as one.
	require.NoError(t, os.Mkdir(f.store.Path(), 0o700))
	p := &recorder{answers: []Answer{Approve}}
	d, err := NewGate(f.store, p).Authorize(context.Background(), path, h)
	require.NoError(t, err)
	assert.True(t, d.Prompted)
	assert.NoError(t, d.Warning)
	aside, _ := filepath.Glob(f.store.Path() + ".corrupt-*")
	assert.Len(t, aside, 1)
	fi, err := os.Stat(f.store.Path())
	require.NoError(t, err)
	assert.False(t, fi.IsDir())
}

func TestRevokeIsObserved(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	path, h := f.script(t, "job.ts", "browser")
	p := &recorder{answers: []Answer{Approve, Approve}}
	g := NewGate(f.store, p)
	_, err := g.Authorize(ctx, path, h)
	require.NoError(t, err)

	var got []Revocation
	var mu sync.Mutex
	stop := f.store.OnRevoke(func(r Revocation) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
	})
	ok, err := g.Store().Revoke(ctx, path)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = g.Store().Revoke(ctx, path)
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to revoke")
	mu.Lock()
	assert.Equal(t, []Revocation{{Script: path}}, got)
	mu.Unlock()

	// Revoked: the next run asks again.
	d, err := g.Authorize(ctx, path, h)
	require.NoError(t, err)
	assert.True(t, d.Prompted && d.FirstRun)

	stop()
	_, err = g.Store().Revoke(ctx, path)
	require.NoError(t, err)
	mu.Lock()
	assert.Len(t, got, 1, "an unsubscribed callback hears nothing")
	mu.Unlock()

	// A deleted script can still be revoked by path.
	require.NoError(t, os.Remove(path))
	_, err = f.store.Approve(ctx, filepath.Join(f.dir, "gone.ts"), "browser")
	require.NoError(t, err)
	ok, err = f.store.Revoke(ctx, filepath.Join(f.dir, "gone.ts"))
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestTwoStoresInParallelLoseNothing(t *testing.T) {
	f := newFixture(t)
	other, err := OpenStore(f.store.Path(), StoreOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := f.store
			if i%2 == 1 {
				s = other
			}
			_, err := s.Approve(ctx, filepath.Join(f.dir, "scripts", fmt.Sprintf("s%02d.ts", i)), "browser")
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	all, err := other.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 40)
}

// TestTwoProcessesLoseNothing runs approvals from two separate processes
// (this test binary re-executed) against one file.
func TestTwoProcessesLoseNothing(t *testing.T) {
	if os.Getenv("CONSENT_HELPER_STORE") != "" {
		return
	}
	f := newFixture(t)
	const perProc = 25
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConsentHelperProcess$")
			cmd.Env = append(os.Environ(), "CONSENT_HELPER_STORE="+f.store.Path(),
				"CONSENT_HELPER_PREFIX="+filepath.Join(f.dir, "p"+strconv.Itoa(i)), "CONSENT_HELPER_N="+strconv.Itoa(perProc))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range 2 {
		require.NoError(t, errs[i], "%s", outs[i])
	}
	all, err := f.store.List(context.Background())
	require.NoError(t, err)
	assert.Len(t, all, 2*perProc)
}

func TestConsentHelperProcess(t *testing.T) {
	storePath := os.Getenv("CONSENT_HELPER_STORE")
	if storePath == "" {
		return // only meaningful when re-executed by TestTwoProcessesLoseNothing
	}
	s, err := OpenStore(storePath, StoreOptions{})
	require.NoError(t, err)
	n, _ := strconv.Atoi(os.Getenv("CONSENT_HELPER_N"))
	prefix := os.Getenv("CONSENT_HELPER_PREFIX")
	for i := range n {
		_, err := s.Approve(context.Background(), prefix+"-"+strconv.Itoa(i)+".ts", "browser net=a.example")
		require.NoError(t, err)
	}
}

func TestWriteFailureIsAWarningNotALoss(t *testing.T) {
	// A store whose directory is a regular file can be neither read nor
	// written, whoever runs the test (root ignores permission bits).
	f := newFixture(t)
	path, h := f.script(t, "job.ts", "browser")
	blocker := filepath.Join(f.dir, "blocker")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	s, err := OpenStore(filepath.Join(f.dir, "ok", "consent.json"), StoreOptions{})
	require.NoError(t, err)
	s.path = filepath.Join(blocker, "consent.json") // its directory is a file
	s.file.Path = s.path
	d, err := NewGate(s, &recorder{answers: []Answer{Approve}}).Authorize(context.Background(), path, h)
	require.NoError(t, err, "the user approved this run")
	assert.True(t, d.Prompted)
	require.Error(t, d.Warning, "but the approval could not be saved")
	assert.True(t, strings.Contains(d.Warning.Error(), "consent"))
}

// A Prompter that ignores its context holds no caller: Authorize returns
// when its ctx ends, the answer given after that approves nothing, and a
// later Authorize asks afresh instead of joining the withdrawn prompt.
func TestWithdrawnPromptApprovesNothing(t *testing.T) {
	testenv.CheckGoroutines(t)
	f := newFixture(t)
	release := make(chan struct{})
	answered := make(chan struct{}, 2)
	var calls atomic.Int32
	g := NewGate(f.store, PrompterFunc(func(ctx context.Context, _ Request) (Answer, error) {
		defer func() { answered <- struct{}{} }()
		if calls.Add(1) == 1 {
			<-release // ignores ctx
		}
		return Approve, nil
	}))
	path, h := f.script(t, "job.ts", "browser")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Authorize(ctx, path, h)
		done <- err
	}()
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("Authorize waited for a Prompter that ignores its context")
	}

	// The next caller gets a prompt of its own, answered at once.
	d, err := g.Authorize(context.Background(), path, h)
	require.NoError(t, err)
	assert.True(t, d.Prompted)
	assert.Equal(t, int32(2), calls.Load())
	<-answered

	// The late answer to the withdrawn prompt changes nothing: revoke the
	// approval the second prompt stored, then let the first answer.
	_, err = f.store.Revoke(context.Background(), path)
	require.NoError(t, err)
	close(release)
	<-answered
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.inflight) == 0
	}, 5*time.Second, time.Millisecond)
	_, found, err := f.store.Get(context.Background(), path)
	require.NoError(t, err)
	assert.False(t, found, "an answer to a withdrawn prompt approved the script")
}
