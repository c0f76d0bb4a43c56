package runner

import (
	"context"
	"crypto/sha256"
	_ "embed" // the shipped std.lock
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

// shippedStdLock pins the @std packages the SDK maps (and the packages
// they import) to the integrity of their version manifests on jsr.io, in
// deno.lock format. Prepare verifies every download against it. Rewrite it
// with `go generate ./runner` (see gen_stdlock_test.go) after changing a
// version in sdk/deno.json.
//
//go:generate go test -run ^TestGenerateStdLock$ . -args -stdlock.registry=https://jsr.io/
//go:embed std.lock
var shippedStdLock []byte

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

// stdPin is one @std package the SDK maps by its short name, at the one
// version it ships (package importtable's, which the import table reads).
type stdPin = importtable.Pin

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

// stdPins are the registry packages the SDK's import map names (its
// "@std/x" entries, not their "@std/x/" prefixes), sorted by name. Each
// must name one exact version: a range would let two installs run
// different code.
func stdPins(config string) ([]stdPin, error) {
	imports, err := sdkImports(config)
	if err != nil {
		return nil, err
	}
	var pins []stdPin
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
	slices.SortFunc(pins, func(a, b stdPin) int { return strings.Compare(a.Name, b.Name) })
	return pins, nil
}

// stdSeed is the lock Prepare verifies the @std packages against.
func (m *Manager) stdSeed() []byte {
	if m.cfg.stdLock != nil {
		return m.cfg.stdLock
	}
	return shippedStdLock
}

// stdLockPath is the lock runs load the @std packages under: the seed as
// Prepare completed it for this SDK and registry (deno adds the SDK's npm
// package and any entry the seed lacks), in DataDir, which no grant
// reaches.
func (m *Manager) stdLockPath(sdk SDKPaths) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(sdk.Dir), []byte(m.jsr.url), m.stdSeed()} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return filepath.Join(m.cfg.DataDir, "std", hex.EncodeToString(h.Sum(nil)[:12])+".lock")
}

// runLock is the lock a run gets (--lock, --frozen): the one Prepare wrote
// for this SDK and registry, or "" when it has not (yet) written one, so
// the run cannot load an @std module at all (the graph check refuses).
func (m *Manager) runLock(sdk SDKPaths) string {
	if m.jsr.host == "" {
		return ""
	}
	p := m.stdLockPath(sdk)
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
func (m *Manager) stdExports(ctx context.Context, dir string, pins []stdPin) (map[stdPin][]string, error) {
	script := filepath.Join(dir, "std_exports.ts")
	if err := os.WriteFile(script, []byte(stdExportsScript), 0o600); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	args := []string{"run", "--no-prompt", "--no-config", "--no-lock", "--allow-net=" + m.jsr.host, script, m.jsr.url}
	for _, p := range pins {
		args = append(args, p.Name+"@"+p.Version)
	}
	cmd := exec.CommandContext(ctx, m.deno, args...)
	cmd.Env = append(m.baseEnv(), downloadEnv()...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if derr := m.denoStartErr(err); derr != nil {
		return nil, derr
	}
	if err != nil {
		var ee *exec.ExitError
		detail := err.Error()
		if errors.As(err, &ee) {
			detail = firstErrorLine(string(ee.Stderr))
		}
		return nil, fmt.Errorf("%w: reading the @std packages' exports from %s: %s", ErrRegistry, m.jsr.url, detail)
	}
	var byPkg map[string][]string
	if err := json.Unmarshal(out, &byPkg); err != nil {
		return nil, fmt.Errorf("%w: reading the @std packages' exports from %s: %v", ErrRegistry, m.jsr.url, err)
	}
	exports := make(map[stdPin][]string, len(pins))
	for _, p := range pins {
		ex := byPkg[p.Name+"@"+p.Version]
		if len(ex) == 0 {
			return nil, fmt.Errorf("%w: %s %s exports nothing at %s", ErrRegistry, p.Name, p.Version, m.jsr.url)
		}
		exports[p] = ex
	}
	return exports, nil
}

// cacheStd downloads every export of every @std package the SDK pins into
// the module cache, verified against the seed lock, and writes the lock
// runs load them under. A download whose version manifest does not match
// the seed's integrity fails, and so does Prepare: the cache then holds
// exactly the pinned code.
func (m *Manager) cacheStd(ctx context.Context, sdk SDKPaths) error {
	pins, err := stdPins(sdk.Config)
	if err != nil || len(pins) == 0 {
		return err
	}
	lock := m.stdLockPath(sdk)
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	work, err := os.MkdirTemp(filepath.Dir(lock), "prepare-")
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	defer os.RemoveAll(work)
	exports, err := m.stdExports(ctx, work, pins)
	if err != nil {
		return err
	}
	draft := filepath.Join(work, "deno.lock")
	if err := os.WriteFile(draft, m.stdSeed(), 0o600); err != nil {
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
	cmd := exec.CommandContext(ctx, m.deno, args...)
	cmd.Env = append(m.baseEnv(), downloadEnv()...)
	cmd.Dir = sdk.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if derr := m.denoStartErr(err); derr != nil {
			return derr
		}
		return fmt.Errorf("%w: caching the @std modules from %s: %s", ErrRegistry, m.jsr.url, denoError(string(out)))
	}
	data, err := os.ReadFile(draft)
	if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return atomicfile.WriteFile(lock, data, 0o600)
}

// ErrRegistry reports that Prepare could not cache the SDK's @std modules
// from Config.JSR. Runs still start; a script importing one is refused
// with ErrRemoteImport.
var ErrRegistry = errors.New("runner: the JSR registry")

// probeCached checks that every registry module a script names loads from
// the module cache, exactly as its run would load it: a deno run of a
// module that imports them, with the SDK's config, the lock Prepare wrote
// (frozen), --cached-only, the registry as the only import host and no
// other permission. It downloads nothing.
func (m *Manager) probeCached(ctx context.Context, sdk SDKPaths, specs []string) error {
	lock := m.runLock(sdk)
	if lock == "" {
		return fmt.Errorf("%w: %s cannot be loaded: this app has not cached its @std packages (Manager.Prepare with its registry, %s, has not succeeded)",
			ErrRemoteImport, strings.Join(specs, ", "), m.jsr.url)
	}
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
	cmd := exec.CommandContext(ctx, m.deno, "run", "--no-prompt", "--config="+sdk.Config, "--lock="+lock, "--frozen", "--cached-only",
		"--allow-import="+m.jsr.host, probe)
	env, done, err := m.scratchEnv() // the probe's modules are not kept
	if err != nil {
		return err
	}
	defer done()
	cmd.Env = env
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if derr := m.denoStartErr(err); derr != nil {
		return derr
	}
	if err != nil {
		return fmt.Errorf("%w: %s is not in this app's module cache (it caches the exports of the @std packages its SDK pins, from %s); %s",
			ErrRemoteImport, strings.Join(specs, ", "), m.jsr.url, denoError(string(out)))
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
