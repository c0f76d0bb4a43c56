package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
// when needed, without the @std step.
func (m *Manager) Prepare(ctx context.Context) error {
	sdk, err := m.prepare(ctx)
	if err != nil || m.jsr.host == "" {
		return err
	}
	_, err = m.prep.std.get(func() (struct{}, error) { return struct{}{}, m.cacheStd(ctx, sdk) })
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
	cmd := exec.CommandContext(ctx, m.deno, "cache", "--no-lock", "--config="+paths.Config, paths.Bootstrap)
	cmd.Env = append(m.baseEnv(), downloadEnv()...)
	cmd.Dir = paths.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if derr := m.denoStartErr(err); derr != nil {
			return SDKPaths{}, derr
		}
		return SDKPaths{}, fmt.Errorf("runner: caching the SDK's dependencies: %w: %s", err, lastLine(string(out)))
	}
	return paths, nil
}

// denoStartErr says what is wrong when deno could not be started at all
// (err from exec, not an exit of deno's): an ErrDenoUnusable naming the
// binary and the fix. It returns nil for an exit status.
func (m *Manager) denoStartErr(err error) error {
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		return nil
	}
	return fmt.Errorf("%w: %s: %v; reinstall it or point DenoPath at a working deno", ErrDenoUnusable, m.deno, errors.Unwrap(err))
}

// baseEnv is the environment every deno process gets: built from scratch,
// never the host's.
func (m *Manager) baseEnv() []string {
	env := []string{
		"DENO_DIR=" + m.cfg.CacheDir,
		"DENO_NO_UPDATE_CHECK=1",
		"DENO_NO_PROMPT=1",
		"NO_COLOR=1",
	}
	if m.jsr.url != "" {
		// The cache is keyed by the registry's URL: Prepare and every run
		// must name the same one.
		env = append(env, "JSR_URL="+m.jsr.url)
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
