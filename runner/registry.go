package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// stdProbeTimeout bounds one check that a script's registry modules are in
// the module cache: a deno start that loads cached files and downloads
// nothing.
const stdProbeTimeout = 30 * time.Second

// jsrRegistry is a validated Config.JSR: the URL deno reads as JSR_URL and
// the host[:port] its import permission names.
type jsrRegistry struct {
	url  string // with a trailing slash
	host string
}

func parseJSR(raw string) (jsrRegistry, error) {
	if raw == "" {
		return jsrRegistry{}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return jsrRegistry{}, fmt.Errorf("runner: JSR %q must be an http or https URL such as https://jsr.io/", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return jsrRegistry{url: u.String(), host: u.Host}, nil
}

// stdPackages are the registry packages the SDK's import map names (its
// "@std/x" entries, not their "@std/x/" prefixes), as their jsr:
// specifiers, sorted.
func stdPackages(config string) ([]string, error) {
	data, err := os.ReadFile(config)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	var c struct {
		Imports map[string]string `json:"imports"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("runner: the SDK's deno.json: %w", err)
	}
	var specs []string
	for name, spec := range c.Imports {
		if strings.HasPrefix(spec, "jsr:") && !strings.HasSuffix(name, "/") {
			specs = append(specs, spec)
		}
	}
	slices.Sort(specs)
	return specs, nil
}

// cacheStd downloads the registry packages the SDK maps into the module
// cache, so runs can load them with --cached-only. A package's entry module
// brings its whole graph; a subpath it does not reach stays uncached, and a
// script importing it is refused by the module-graph check.
func (m *Manager) cacheStd(ctx context.Context, sdk SDKPaths) error {
	specs, err := stdPackages(sdk.Config)
	if err != nil || len(specs) == 0 {
		return err
	}
	args := append([]string{"cache", "--no-lock", "--no-config"}, specs...)
	cmd := exec.CommandContext(ctx, m.deno, args...)
	cmd.Env = append(m.baseEnv(), downloadEnv()...)
	cmd.Dir = sdk.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if derr := m.denoStartErr(err); derr != nil {
			return derr
		}
		return fmt.Errorf("%w: caching the @std modules from %s: %s", ErrRegistry, m.jsr.url, lastLine(string(out)))
	}
	return nil
}

// ErrRegistry reports that Prepare could not cache the SDK's @std modules
// from Config.JSR. Runs still start; a script importing one that is not
// cached is refused with ErrRemoteImport.
var ErrRegistry = errors.New("runner: the JSR registry")

// probeCached checks that every remote module a script names loads from
// the module cache, exactly as its run would load it: a deno run of a
// module that imports them, with --cached-only, the registry as the only
// import host and no other permission. It downloads nothing.
func (m *Manager) probeCached(ctx context.Context, specs []string) error {
	dir, err := os.MkdirTemp(m.cfg.DataDir, "probe-")
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	defer os.RemoveAll(dir)
	var src strings.Builder
	for _, s := range specs {
		fmt.Fprintf(&src, "import %q;\n", s)
	}
	probe := filepath.Join(dir, "probe.ts")
	if err := os.WriteFile(probe, []byte(src.String()), 0o600); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, stdProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.deno, "run", "--no-prompt", "--no-config", "--no-lock", "--cached-only",
		"--allow-import="+m.jsr.host, probe)
	cmd.Env = m.baseEnv()
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if derr := m.denoStartErr(err); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("%w: %s is not in this app's module cache (it caches the @std packages its SDK maps, from %s); %s",
			ErrRemoteImport, strings.Join(specs, ", "), m.jsr.url, firstErrorLine(string(out)))
	}
	return nil
}

// firstErrorLine is deno's own "error: …" line, the one that says which
// module failed.
func firstErrorLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "error: ") {
			return strings.TrimPrefix(l, "error: ")
		}
	}
	return lastLine(out)
}
