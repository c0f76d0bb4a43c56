package runner

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tranquil/automation/internal/filelock"
	"github.com/tranquil/automation/permissions"
)

// A run's own deno cache.
//
// Deno writes to its cache (DENO_DIR) while a program runs: the emit of
// each TypeScript module it transpiles (gen/), V8's code cache and its
// analysis caches (SQLite files at the top), the origin's storage
// (location_data/). A module the script makes as it runs (a data: URL of
// its own, say) is a new entry in each, kept for good: a run granted
// nothing once grew a shared cache by 200 MB in 16 s that way. So no run
// gets the shared cache (Config.CacheDir) as its DENO_DIR. Each gets a
// folder of its own, <DataDir>/runs/run-<random>, which no grant reaches
// (DataDir is protected), laid out from:
//
//   - npm/ and remote/ of the shared cache, which Prepare fills: linked
//     whole (a symlink) for a run that cannot download (--cached-only, the
//     default), so deno reads them and writes nothing there; for a run
//     that may download (import= hosts) each folder is made anew and each
//     file linked, so what it downloads lands in its own folder;
//   - the seed Prepare made for this Manager (runs/seed-<random>): the
//     analysis and code caches and the emitted SDK of a warm-up that loaded
//     the bootstrap, copied (the caches, which deno writes in place) or
//     linked file by file (the emits, which deno replaces rather than
//     writes into), so a run starts as warm as one on the shared cache did;
//   - the script's localStorage, linked to its folder in the shared
//     cache's location_data (storage.go), where it is kept between runs.
//
// Laying a folder out makes a few dozen files, which on a slow file
// system costs more than deno's start, so a janitor goroutine keeps
// spares ready for runs that cannot download, and removes the folders of
// ended runs, both off the runs' way. What a run writes in its folder is
// bounded by Config.DiskLimit (diskwatch.go). Each folder holds a lock
// while in use, and New removes those a host that died left
// (sweepRunCaches).

// spareCaches is how many laid-out folders wait for runs.
const spareCaches = 2

// staleRunCache is how old a folder must be before New removes it when
// its lock is free: a folder is made and locked in one step, but another
// Manager's New must not catch it between the two.
const staleRunCache = time.Minute

// warmUpTimeout bounds the seed's warm-up, which takes about as long as a
// run's start: the seed is only worth waiting so long for.
const warmUpTimeout = 30 * time.Second

// lockName is the lock file in a run's folder and in the seed.
const lockName = ".lock"

// sharedEntries are the parts of the shared cache that Prepare fills and
// runs read.
var sharedEntries = []string{"npm", "remote"}

// runCaches lays out runs' caches and removes them. It guards itself. Its
// goroutine, the janitor, is started by start and stopped by close.
type runCaches struct {
	root   string // <DataDir>/runs
	shared string // Config.CacheDir
	log    *slog.Logger

	// Set by start, never changed.
	ctx  context.Context    // the janitor's, for its warm-up
	halt context.CancelFunc // ends ctx, by close
	wake chan struct{}      // one pending wake-up for the janitor
	stop chan struct{}      // closed by close
	done chan struct{}      // closed when the janitor returns

	mu      sync.Mutex                            // guards what follows
	warm    func(ctx context.Context, dir string) // loads the bootstrap in dir; nil until Prepare
	seed    string                                // the seed's folder; "" when there is none
	unlock  func()                                // the seed's lock
	spares  []*runCache                           // laid out for runs that cannot download
	trash   []*runCache                           // ended runs' folders, to remove
	working bool                                  // the janitor is at work
	closed  bool                                  // the janitor has stopped; release removes at once

	// copyStores copies every script's store into its run's folder, as
	// where symlinks cannot be made; set by tests before any run.
	copyStores bool
}

// runCache is one run's DENO_DIR, locked while in use.
type runCache struct {
	dir    string
	unlock func()
	// copied is the script's store when it was copied into dir rather
	// than linked (storeOrigin): release copies it back.
	copied *storeCopy
	// linked holds the files of dir that are hard links to shared files
	// (where symlinks cannot be made), as they were linked: the disk
	// watch does not charge the run for them. Written while the folder
	// is laid out, read-only after.
	linked linkedFiles
}

// linkedFiles maps a hard link's path to its file's size and time when
// it was made; a file deno later put in its place differs in one or both.
type linkedFiles map[string]fileStamp

type fileStamp struct {
	size int64
	mod  time.Time
}

// holds reports whether the file at p, described by fi, is still the
// shared file linked there.
func (l linkedFiles) holds(p string, fi fs.FileInfo) bool {
	st, ok := l[p]
	return ok && st.size == fi.Size() && st.mod.Equal(fi.ModTime())
}

// start starts the janitor.
func (c *runCaches) start() {
	c.wake, c.stop, c.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	c.ctx, c.halt = context.WithCancel(context.Background())
	go c.janitor()
}

// close stops the janitor, which removes the spares, the folders of ended
// runs and the seed, and waits for it.
func (c *runCaches) close() {
	c.halt()
	close(c.stop)
	<-c.done
}

func (c *runCaches) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// janitor removes ended runs' folders, makes the seed once Prepare has
// said how (seed), and keeps spareCaches spares laid out from it, until
// close. Its warm-up deno is stopped by close too.
func (c *runCaches) janitor() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			c.shutDown()
			return
		default:
		}
		c.mu.Lock()
		trash, warm := c.trash, c.warm
		c.trash, c.warm = nil, nil
		need := c.seed != "" && len(c.spares) < spareCaches
		c.working = len(trash) > 0 || warm != nil || need
		c.mu.Unlock()
		for _, rc := range trash {
			rc.remove()
		}
		if warm != nil {
			c.makeSeed(c.ctx, warm)
			continue
		}
		if need && c.addSpare() {
			continue
		}
		c.mu.Lock()
		c.working = false
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-c.stop:
			c.shutDown()
			return
		}
	}
}

// addSpare lays out one spare; false when it could not (logged).
func (c *runCaches) addSpare() bool {
	rc, err := c.make(false)
	if err != nil {
		c.log.Warn("runner: laying out a run's cache", "error", err)
		return false
	}
	c.mu.Lock()
	c.spares = append(c.spares, rc)
	c.mu.Unlock()
	return true
}

// shutDown removes what the janitor kept: spares, ended runs' folders,
// the seed.
func (c *runCaches) shutDown() {
	c.mu.Lock()
	c.closed, c.working = true, false
	left := append(c.trash, c.spares...)
	if c.unlock != nil {
		left = append(left, &runCache{dir: c.seed, unlock: c.unlock})
	}
	c.trash, c.spares, c.seed, c.unlock = nil, nil, "", nil
	c.mu.Unlock()
	for _, rc := range left {
		rc.remove()
	}
}

// idle reports whether the janitor has nothing left to do: for tests and
// benchmarks, so that its work does not land in what they measure.
func (c *runCaches) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.working && len(c.trash) == 0 && c.warm == nil && (c.seed == "" || len(c.spares) == spareCaches)
}

// makeDir makes a new locked folder under the root, named prefix and a
// random suffix.
func (c *runCaches) makeDir(prefix string) (*runCache, error) {
	if err := os.MkdirAll(c.root, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	dir := filepath.Join(c.root, prefix+uuid.NewString())
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	unlock, err := filelock.Lock(context.Background(), filepath.Join(dir, lockName))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return &runCache{dir: dir, unlock: unlock}, nil
}

// seedFrom has the janitor make the seed of runs' caches with warm,
// which loads the bootstrap in a folder; Prepare calls it once.
func (c *runCaches) seedFrom(warm func(ctx context.Context, dir string)) {
	c.mu.Lock()
	c.warm = warm
	c.mu.Unlock()
	c.poke()
}

// makeSeed warms a fresh cache up and keeps it, less the shared parts, as
// the seed of every later run's. Without a seed runs still start, only
// colder, so a failure is logged, not returned.
func (c *runCaches) makeSeed(ctx context.Context, warm func(ctx context.Context, dir string)) {
	rc, err := c.makeDir("seed-")
	if err == nil {
		err = c.linkShared(rc.dir, true, nil)
	}
	if err != nil {
		c.log.Warn("runner: preparing runs' caches", "error", err)
		if rc != nil {
			rc.remove()
		}
		return
	}
	warm(ctx, rc.dir)
	for _, name := range sharedEntries {
		os.RemoveAll(filepath.Join(rc.dir, name)) // a link: the seed keeps its own files only
	}
	c.mu.Lock()
	c.seed, c.unlock = rc.dir, rc.unlock
	c.mu.Unlock()
}

// warmUp loads the bootstrap of sdk with dir as its deno cache, as a run
// would, and stops there: it has no run to connect to, so its exit says
// nothing. What deno kept in dir is then the seed.
func (m *Manager) warmUp(sdk SDKPaths) func(ctx context.Context, dir string) {
	return func(ctx context.Context, dir string) {
		ctx, cancel := context.WithTimeout(ctx, warmUpTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, m.deno, "run", "--no-prompt", "--cached-only", "--no-lock", "--config="+sdk.Config,
			"--allow-read="+sdk.Dir, "--preload="+sdk.Bootstrap, filepath.Join(sdk.Dir, "cache_probe.ts"))
		cmd.Env = m.denoEnv(dir)
		cmd.Dir = sdk.Dir
		_ = cmd.Run()
	}
}

// open returns a run's cache for a run of h, laid out (see the top of
// this file).
func (c *runCaches) open(h *permissions.Header, download bool) (*runCache, error) {
	rc, err := c.take(download)
	if err != nil {
		return nil, err
	}
	copied, err := storeOrigin(rc.dir, c.shared, h, !c.copyStores)
	if err != nil {
		c.release(rc)
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	rc.copied = copied
	return rc, nil
}

// take returns a laid-out folder without a script's storage: a spare if
// one is ready and its user cannot download, else one made now.
func (c *runCaches) take(download bool) (*runCache, error) {
	if !download {
		c.mu.Lock()
		n := len(c.spares)
		if n > 0 {
			rc := c.spares[n-1]
			c.spares = c.spares[:n-1]
			c.mu.Unlock()
			return rc, nil
		}
		c.mu.Unlock()
	}
	return c.make(download)
}

// scratchEnv is the environment of a host's own deno process that loads
// a script's modules without running the script (the module check, the
// registry probe), with a cache folder of its own, so that what deno
// keeps of them lands there and not in the shared cache; done gives the
// folder back. The process must not download.
func (m *Manager) scratchEnv() (env []string, done func(), err error) {
	rc, err := m.caches.take(false)
	if err != nil {
		return nil, nil, err
	}
	return m.denoEnv(rc.dir), func() { m.caches.release(rc) }, nil
}

// release hands an ended run's folder to the janitor to remove.
func (c *runCaches) release(rc *runCache) {
	if rc.copied != nil {
		// The run has ended: its deno wrote its store for the last time.
		if err := rc.copied.keep(); err != nil {
			c.log.Warn("runner: keeping a script's localStorage", "dir", rc.copied.kept, "error", err)
		}
		rc.copied = nil
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		rc.remove()
		return
	}
	c.trash = append(c.trash, rc)
	c.mu.Unlock()
	c.poke()
}

// make lays out a new folder: the shared parts and the seed, all but the
// script's own storage.
func (c *runCaches) make(download bool) (*runCache, error) {
	rc, err := c.makeDir("run-")
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	seed := c.seed
	c.mu.Unlock()
	rc.linked = linkedFiles{}
	err = c.linkShared(rc.dir, !download, rc.linked)
	if err == nil && seed != "" {
		err = copySeed(rc.dir, seed, rc.linked)
	}
	if err == nil {
		err = os.MkdirAll(filepath.Join(rc.dir, "location_data", "web_cache"), 0o700)
	}
	if err != nil {
		rc.remove()
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return rc, nil
}

// remove releases the folder's lock and removes it.
func (rc *runCache) remove() {
	rc.unlock()
	os.RemoveAll(rc.dir)
}

// linkShared gives dir the shared cache's npm/ and remote/: links to
// them when whole, else trees of new folders whose files are links. A
// missing part (no registry, so no remote/) is left out. Hard links go
// into linked when it is not nil.
func (c *runCaches) linkShared(dir string, whole bool, linked linkedFiles) error {
	for _, name := range sharedEntries {
		src := filepath.Join(c.shared, name)
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			continue
		}
		dst := filepath.Join(dir, name)
		if whole && symlink(src, dst) {
			continue
		}
		if err := linkTree(dst, src, linked); err != nil {
			return err
		}
	}
	return nil
}

// linkTree makes dst a tree of the folders of src holding a link to each
// of its files: deno replaces a cache file (a new file, renamed into
// place) rather than writing into it, so a link's target is never
// written. A symlink is tried first and a hard link second, for a system
// (Windows without the privilege) where a user cannot make symlinks; the
// hard links go into linked when it is not nil.
func linkTree(dst, src string, linked linkedFiles) error {
	return eachFile(dst, src, func(to, from string) error {
		if symlink(from, to) {
			return nil
		}
		if err := os.Link(from, to); err != nil {
			return err
		}
		if fi, err := os.Stat(to); err == nil && linked != nil {
			linked[to] = fileStamp{fi.Size(), fi.ModTime()}
		}
		return nil
	})
}

// eachFile makes the folders of src anew under dst and calls file for
// each regular file, with its path under dst and under src; a link in src
// is not followed.
func eachFile(dst, src string, file func(to, from string) error) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type().IsRegular():
			return file(to, p)
		}
		return nil
	})
}

// symlink makes link a symbolic link to target and reports whether it
// leads there. A link that was not made, or does not lead to target (Wine
// reports success for symlinks it never makes), is removed, so the caller
// can fall back to a hard link.
func symlink(target, link string) bool {
	if os.Symlink(target, link) != nil {
		return false
	}
	want, err := os.Stat(target)
	if err != nil {
		return false
	}
	if got, err := os.Stat(link); err == nil && os.SameFile(want, got) {
		return true
	}
	os.Remove(link)
	return false
}

// copySeed gives a run's folder the seed: a copy of each file at its top
// (the SQLite caches, which deno writes in place) and links to the rest
// (the SDK's emits), which go into linked when they are hard links.
func copySeed(dir, seed string, linked linkedFiles) error {
	ents, err := os.ReadDir(seed)
	if err != nil {
		return err
	}
	for _, e := range ents {
		src, dst := filepath.Join(seed, e.Name()), filepath.Join(dir, e.Name())
		switch {
		case e.Name() == lockName:
		case e.IsDir():
			if err := linkTree(dst, src, linked); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if err := copyFile(src, dst); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sweepRunCaches removes the folders under root that no live Manager
// holds: a host that died left them.
func sweepRunCaches(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "run-") && !strings.HasPrefix(name, "seed-") {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < staleRunCache {
			continue
		}
		dir := filepath.Join(root, name)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // take the lock only if it is free now
		if unlock, err := filelock.Lock(ctx, filepath.Join(dir, lockName)); err == nil {
			(&runCache{dir: dir, unlock: unlock}).remove()
		}
	}
}
