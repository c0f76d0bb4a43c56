package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/tranquil/automation/runner/internal/modgraph"
)

// prepared is what Prepare has done, once for the Manager's life: the SDK
// materialised with its npm dependency cached, and the @std packages
// cached (with Config.JSR).
type prepared struct {
	sdk onceOK[SDKPaths]
	std onceOK[struct{}]
}

// onceOK is a value made once. A failed attempt keeps nothing, so the next
// call tries again; attempts run one at a time, and a call waits for the
// one under way.
type onceOK[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
}

func (o *onceOK[T]) get(make func() (T, error)) (T, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return o.v, nil
	}
	v, err := make()
	if err != nil {
		var zero T
		return zero, err
	}
	o.v, o.done = v, true
	return v, nil
}

// Prepare materialises the embedded SDK and caches its npm dependency, so
// that no run downloads anything; with Config.JSR it also caches every
// export of the @std packages the SDK's import map pins, each at its one
// version, verified against the integrity the library ships (std.lock),
// and writes the lock runs load them under (--lock, --frozen). If that
// fails it returns an error wrapping [ErrRegistry]: runs still start, a
// script importing an @std module is refused, and the next Prepare tries
// again. It is idempotent and safe to call concurrently; Start calls it
// when needed, without the @std step. Then, in the background, the
// bootstrap is loaded once in a cache of its own, kept as the start of
// every run's (runcache.go).
func (m *Manager) Prepare(ctx context.Context) error {
	sdk, err := m.prepare(ctx)
	if err != nil || m.graphs.Registry.Host == "" {
		return err
	}
	_, err = m.prep.std.get(func() (struct{}, error) { return struct{}{}, m.graphs.CacheStd(ctx, modgraph.SDK(sdk)) })
	return err
}

// prepare returns the SDK's paths, materialising it and caching its
// dependency on first use.
func (m *Manager) prepare(ctx context.Context) (SDKPaths, error) {
	return m.prep.sdk.get(func() (SDKPaths, error) { return m.prepareSDK(ctx) })
}

func (m *Manager) prepareSDK(ctx context.Context) (SDKPaths, error) {
	paths, err := MaterializeSDK(filepath.Join(m.cfg.DataDir, "sdk"))
	if err != nil {
		return SDKPaths{}, err
	}
	// The editor's config and the guide follow each new build.
	if _, err := PublishSDK(paths); err != nil {
		return SDKPaths{}, err
	}
	tidySharedCache(m.cfg.CacheDir)
	cmd := exec.CommandContext(ctx, m.deno, "cache", "--no-lock", "--config="+paths.Config, paths.Bootstrap)
	cmd.Env = append(m.baseEnv(), downloadEnv()...)
	cmd.Dir = paths.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if derr := m.denoStartErr(err); derr != nil {
			return SDKPaths{}, derr
		}
		return SDKPaths{}, fmt.Errorf("runner: caching the SDK's dependencies: %w: %s", err, modgraph.LastLine(string(out)))
	}
	m.caches.seedFrom(m.warmUp(paths))
	return paths, nil
}

// staleCacheBytes is the size past which one of deno's own caches in the
// shared cache is taken for what runs of older versions left there.
const staleCacheBytes = 64 << 20

// tidySharedCache removes what runs of older versions, which had the
// shared cache as their DENO_DIR, left in it and no run reads any more:
// the emits of the data: modules they made (gen/data), and V8's code
// cache and the analysis caches once one passes staleCacheBytes (a flood
// of modules made them grow without bound). Deno makes any of them anew
// when it needs one; a process that has one open keeps its own copy.
func tidySharedCache(dir string) {
	os.RemoveAll(filepath.Join(dir, "gen", "data"))
	for _, db := range []string{"v8_code_cache_v2", "dep_analysis_cache_v2", "node_analysis_cache_v2"} {
		var size int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(filepath.Join(dir, db+suffix)); err == nil {
				size += fi.Size()
			}
		}
		if size > staleCacheBytes {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(filepath.Join(dir, db+suffix))
			}
		}
	}
}

// denoStartErr says what is wrong when deno could not be started at all
// (err from exec, not an exit of deno's): an ErrDenoUnusable naming the
// binary and the fix. It returns nil for an exit status.
func (m *Manager) denoStartErr(err error) error {
	var ee *exec.ExitError
	// A context that ended before deno could start says nothing of deno.
	if err == nil || errors.As(err, &ee) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return nil
	}
	why := errors.Unwrap(err)
	if why == nil {
		why = err
	}
	return fmt.Errorf("%w: %s: %v; reinstall it or point DenoPath at a working deno", ErrDenoUnusable, m.deno, why)
}

// baseEnv is the environment of the host's own deno processes that use
// the shared cache (Prepare, CacheWarm): built from scratch, never the
// host's, with the shared cache as DENO_DIR.
func (m *Manager) baseEnv() []string { return m.denoEnv(m.cfg.CacheDir) }

// denoEnv is baseEnv with dir as DENO_DIR: a run's own cache.
func (m *Manager) denoEnv(dir string) []string {
	env := []string{
		"DENO_DIR=" + dir,
		"DENO_NO_UPDATE_CHECK=1",
		"DENO_NO_PROMPT=1",
		"NO_COLOR=1",
	}
	if m.graphs.Registry.URL != "" {
		// The cache is keyed by the registry's URL: Prepare and every run
		// must name the same one.
		env = append(env, "JSR_URL="+m.graphs.Registry.URL)
	}
	return env
}

// downloadVars configure how the host itself reaches package registries:
// its certificate authorities and proxies. Prepare's download is the
// host's own act, so it honours them; a script's run never gets them.
var downloadVars = []string{"NODE_EXTRA_CA_CERTS", "DENO_CERT", "DENO_TLS_CA_STORE", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy", "NPM_CONFIG_REGISTRY", "DENO_AUTH_TOKENS"}

func downloadEnv() []string {
	var env []string
	for _, k := range downloadVars {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
