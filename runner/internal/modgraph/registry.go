package modgraph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/tranquil/automation/internal/atomicfile"
	"github.com/tranquil/automation/internal/importtable"
)

// stdProbeTimeout bounds one check that a script's registry modules are in
// the module cache: a deno start that loads cached files and downloads
// nothing.
const stdProbeTimeout = 30 * time.Second

// Registry is a validated JSR registry (runner.Config.JSR); the zero
// value names none.
type Registry struct {
	URL  string // what deno reads as JSR_URL, with a trailing slash
	Host string // host[:port], as the import permission names it
}

// ParseRegistry validates raw, an http or https URL such as
// https://jsr.io/; "" names no registry.
func ParseRegistry(raw string) (Registry, error) {
	if raw == "" {
		return Registry{}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Registry{}, fmt.Errorf("runner: JSR %q must be an http or https URL such as https://jsr.io/", raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return Registry{URL: u.String(), Host: u.Host}, nil
}

// sdkImports is the SDK's import map.
func sdkImports(config string) (map[string]string, error) {
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
	return c.Imports, nil
}

// StdPins are the registry packages the SDK's import map names (its
// "@std/x" entries, not their "@std/x/" prefixes), sorted by name. Each
// must name one exact version: a range would let two installs run
// different code.
func StdPins(config string) ([]importtable.Pin, error) {
	imports, err := sdkImports(config)
	if err != nil {
		return nil, err
	}
	var pins []importtable.Pin
	for name, spec := range imports {
		if !strings.HasPrefix(spec, "jsr:") || strings.HasSuffix(name, "/") {
			continue
		}
		pin, ok := importtable.ParsePin(spec)
		if !ok || pin.Name != name {
			return nil, fmt.Errorf("runner: the SDK's deno.json maps %s to %s, not to one exact version of it", name, spec)
		}
		pins = append(pins, pin)
	}
	slices.SortFunc(pins, func(a, b importtable.Pin) int { return strings.Compare(a.Name, b.Name) })
	return pins, nil
}

// StdLockPath is the lock runs load the @std packages under: the seed as
// CacheStd completed it for this SDK and registry (deno adds the SDK's
// npm package and any entry the seed lacks), in DataDir, which no grant
// reaches.
func (c *Checker) StdLockPath(sdk SDK) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(sdk.Dir), []byte(c.Registry.URL), c.StdSeed} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return filepath.Join(c.DataDir, "std", hex.EncodeToString(h.Sum(nil)[:12])+".lock")
}

// RunLock is the lock a run gets (--lock, --frozen): the one CacheStd
// wrote for this SDK and registry, or "" when it has not (yet) written
// one, so the run cannot load an @std module at all (Check refuses).
func (c *Checker) RunLock(sdk SDK) string {
	if c.Registry.Host == "" {
		return ""
	}
	p := c.StdLockPath(sdk)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// stdExportsScript lists the exports of each package version it is given,
// from the registry's version manifests ("<version>_meta.json"), as JSON
// {"@std/fmt@1.0.8": ["./bytes", "./colors", …]}. Deno fetches them, so
// the host's proxies and certificate authorities apply as for the
// download itself.
const stdExportsScript = `const [base, ...pkgs] = Deno.args;
const out: Record<string, string[]> = {};
for (const p of pkgs) {
  const at = p.lastIndexOf("@");
  const url = new URL(p.slice(0, at) + "/" + p.slice(at + 1) + "_meta.json", base);
  const res = await fetch(url);
  if (!res.ok) {
    console.error("error: " + url + ": " + res.status + " " + res.statusText);
    Deno.exit(1);
  }
  const meta = await res.json();
  out[p] = Object.keys(meta.exports ?? {}).sort();
}
console.log(JSON.stringify(out));
`

// stdExports asks the registry what each pinned package exports. Some
// export no root module (@std/fmt, @std/testing: only "./colors",
// "./bdd", …), so a package is cached by its exports, never by its name
// alone.
func (c *Checker) stdExports(ctx context.Context, dir string, pins []importtable.Pin) (map[importtable.Pin][]string, error) {
	script := filepath.Join(dir, "std_exports.ts")
	if err := os.WriteFile(script, []byte(stdExportsScript), 0o600); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	args := []string{"run", "--no-prompt", "--no-config", "--no-lock", "--allow-net=" + c.Registry.Host, script, c.Registry.URL}
	for _, p := range pins {
		args = append(args, p.Name+"@"+p.Version)
	}
	cmd := exec.CommandContext(ctx, c.Deno, args...)
	cmd.Env = c.Launcher.DownloadEnv()
	cmd.Dir = dir
	out, err := cmd.Output()
	if derr := c.Launcher.StartErr(err); derr != nil {
		return nil, derr
	}
	if err != nil {
		var ee *exec.ExitError
		detail := err.Error()
		if errors.As(err, &ee) {
			detail = firstErrorLine(string(ee.Stderr))
		}
		return nil, fmt.Errorf("%w: reading the @std packages' exports from %s: %s", ErrRegistry, c.Registry.URL, detail)
	}
	var byPkg map[string][]string
	if err := json.Unmarshal(out, &byPkg); err != nil {
		return nil, fmt.Errorf("%w: reading the @std packages' exports from %s: %v", ErrRegistry, c.Registry.URL, err)
	}
	exports := make(map[importtable.Pin][]string, len(pins))
	for _, p := range pins {
		ex := byPkg[p.Name+"@"+p.Version]
		if len(ex) == 0 {
			return nil, fmt.Errorf("%w: %s %s exports nothing at %s", ErrRegistry, p.Name, p.Version, c.Registry.URL)
		}
		exports[p] = ex
	}
	return exports, nil
}

// CacheStd downloads every export of every @std package the SDK pins into
// the module cache, verified against the seed lock, and writes the lock
// runs load them under. A download whose version manifest does not match
// the seed's integrity fails, and so does Prepare: the cache then holds
// exactly the pinned code.
func (c *Checker) CacheStd(ctx context.Context, sdk SDK) error {
	if c.StdSeed == nil {
		return fmt.Errorf("%w: no lock to verify the @std packages against (Checker.StdSeed)", ErrRegistry)
	}
	pins, err := StdPins(sdk.Config)
	if err != nil || len(pins) == 0 {
		return err
	}
	lock := c.StdLockPath(sdk)
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	work, err := os.MkdirTemp(filepath.Dir(lock), "prepare-")
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	defer os.RemoveAll(work)
	exports, err := c.stdExports(ctx, work, pins)
	if err != nil {
		return err
	}
	draft := filepath.Join(work, "deno.lock")
	if err := os.WriteFile(draft, c.StdSeed, 0o600); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	// The bootstrap too, so the lock holds the SDK's npm package and the
	// config's dependencies: a frozen run would refuse to add them.
	args := []string{"cache", "--config=" + sdk.Config, "--lock=" + draft, sdk.Bootstrap}
	for _, p := range pins {
		for _, e := range exports[p] {
			args = append(args, p.Spec(e))
		}
	}
	cmd := exec.CommandContext(ctx, c.Deno, args...)
	cmd.Env = c.Launcher.DownloadEnv()
	cmd.Dir = sdk.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if derr := c.Launcher.StartErr(err); derr != nil {
			return derr
		}
		return fmt.Errorf("%w: caching the @std modules from %s: %s", ErrRegistry, c.Registry.URL, denoError(string(out)))
	}
	data, err := os.ReadFile(draft)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return atomicfile.WriteFile(lock, data, 0o600)
}

// ErrRegistry reports that CacheStd could not cache the SDK's @std
// modules from the registry; runner exports it.
var ErrRegistry = errors.New("runner: the JSR registry")

// probeCached checks that every registry module a script names loads from
// the module cache, exactly as its run would load it: a deno run of a
// module that imports them, with the SDK's config, the lock Prepare wrote
// (frozen), --cached-only, the registry as the only import host and no
// other permission. It downloads nothing.
func (c *Checker) probeCached(ctx context.Context, sdk SDK, specs []string) error {
	lock := c.RunLock(sdk)
	if lock == "" {
		return fmt.Errorf("%w: %s cannot be loaded: this app has not cached its @std packages (Manager.Prepare with its registry, %s, has not succeeded)",
			ErrRemoteImport, strings.Join(specs, ", "), c.Registry.URL)
	}
	dir, err := os.MkdirTemp(c.DataDir, "probe-")
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
	cmd := exec.CommandContext(ctx, c.Deno, "run", "--no-prompt", "--config="+sdk.Config, "--lock="+lock, "--frozen", "--cached-only",
		"--allow-import="+c.Registry.Host, probe)
	env, done, err := c.Launcher.ScratchEnv() // the probe's modules are not kept
	if err != nil {
		return err
	}
	defer done()
	cmd.Env = env
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if derr := c.Launcher.StartErr(err); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("%w: %s is not in this app's module cache (it caches the exports of the @std packages its SDK pins, from %s); %s",
			ErrRemoteImport, strings.Join(specs, ", "), c.Registry.URL, denoError(string(out)))
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
	return LastLine(out)
}

// LastLine is the last line of deno's output that is not empty.
func LastLine(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] != "" {
			return lines[i]
		}
	}
	return ""
}

// denoError is deno's error line with the details that name what failed:
// the package or module of an integrity failure.
func denoError(out string) string {
	msg := firstErrorLine(out)
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "Package: ") || strings.HasPrefix(t, "Specifier: ") {
			msg += " (" + t + ")"
		}
	}
	return msg
}
