package modgraph

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/internal/importtable"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/permissions"
)

// The refusals of Check; package runner exports them, and says there
// what each covers.
var (
	// ErrUndeclaredImport: the graph loads a local file that is neither
	// the entry, the SDK, nor inside a read= grant.
	ErrUndeclaredImport = errors.New("runner: the script imports a file it did not declare")
	// ErrRemoteImport: the graph names a module the run cannot load.
	ErrRemoteImport = errors.New("runner: the script imports code its run cannot load")
)

// Checker checks scripts' module graphs and caches the @std packages the
// SDK pins. Set its fields before the first call and do not change them;
// its methods are then safe for concurrent use. It must not be copied
// once used.
type Checker struct {
	// Deno is the deno binary the checks run. Required.
	Deno string
	// Launcher builds the checks' deno environments and reads their start
	// errors. Required.
	Launcher Launcher
	// DataDir holds the registry probes' folders and the @std locks
	// (DataDir/std), where no grant reaches. Required.
	DataDir string
	// Registry is the JSR registry (ParseRegistry); the zero value names
	// none, and no script loads an @std module.
	Registry Registry
	// AnyImports says that every run may import remote code
	// (runner.Config.DefaultImports is not empty); false: only a run with
	// an import= grant may.
	AnyImports bool
	// StdSeed is the lock CacheStd verifies the @std downloads against,
	// in deno.lock format (runner: the shipped std.lock). With nil,
	// CacheStd fails: nothing is downloaded unverified.
	StdSeed []byte

	// cache remembers passed checks. An entry stays valid while every
	// local file of the graph keeps its content (SHA-256) and the header
	// is unchanged. Size and modification time are no key: a script that
	// may write a module can keep both (Deno.utimeSync) while changing
	// what the module imports.
	mu      sync.Mutex
	entries map[string]graphEntry
}

// Launcher is the host's side of the deno processes the checks start; a
// runner.Manager supplies it.
type Launcher interface {
	// DownloadEnv is the environment of a deno process that downloads
	// into the shared module cache (CacheStd): built from scratch, with
	// the host's own proxies and certificate authorities.
	DownloadEnv() []string
	// ScratchEnv is the environment of a deno process that loads a
	// script's modules without running it, with a cache folder of its
	// own; done gives the folder back. The process must not download.
	ScratchEnv() (env []string, done func(), err error)
	// StartErr says what is wrong when deno could not be started at all
	// (err from exec), and returns nil for an exit status or a context
	// that ended first.
	StartErr(err error) error
}

// SDK is where the SDK the scripts import lies (runner.SDKPaths).
type SDK struct {
	// Dir holds the SDK's files; what lies in it is loaded by every run.
	Dir string
	// Bootstrap is the module deno runs (Dir/main.ts).
	Bootstrap string
	// Config is the SDK's deno.json (Dir/deno.json), with its import map.
	Config string
}

type graphEntry struct {
	header string
	files  map[string]digest
}

// digest is a file's SHA-256; the zero value stands for a file that could
// not be read, so one that appears later is seen as a change.
type digest [sha256.Size]byte

// hashFile reads the whole file at once: modules are small, and one read
// costs about half of streaming it through io.Copy.
func hashFile(p string) digest {
	data, err := os.ReadFile(p)
	if err != nil {
		return digest{}
	}
	return sha256.Sum256(data)
}

// Check refuses a run of entry under h whose module graph loads a local
// file it did not declare (ErrUndeclaredImport) or code it cannot load
// (ErrRemoteImport). A passed check is remembered while the graph's files
// keep their content and the header is unchanged (see Checker). It does
// not check the granted trees for links: the caller does that before
// every check, cached or not, since a link can appear at any moment.
func (c *Checker) Check(ctx context.Context, sdk SDK, h *permissions.Header, entry string) error {
	canonical := h.Canonical()
	c.mu.Lock()
	e, ok := c.entries[entry]
	c.mu.Unlock()
	if ok && e.header == canonical && e.fresh() {
		return nil
	}
	files, names, err := c.moduleFiles(ctx, sdk, entry)
	if err != nil {
		return err
	}
	if err := c.checkImports(ctx, sdk, h, names); err != nil {
		return err
	}
	// Hashing after deno info read the graph leaves a window in which a
	// file could change unseen; the next check would see it, and deno's own
	// read check of the dynamic import still applies.
	sums := make(map[string]digest, len(files))
	for _, f := range files {
		if err := allowedModule(f, entry, sdk.Dir, h.Read); err != nil {
			return err
		}
		sums[f] = hashFile(f)
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]graphEntry{}
	}
	c.entries[entry] = graphEntry{header: canonical, files: sums}
	c.mu.Unlock()
	return nil
}

// checkImports refuses the first module names a run could not load (see
// ErrRemoteImport), with the way out; jsr: modules it would load from the
// cache are checked there, all at once.
func (c *Checker) checkImports(ctx context.Context, sdk SDK, h *permissions.Header, names []importRef) error {
	if len(names) == 0 {
		return nil
	}
	imports, err := sdkImports(sdk.Config)
	if err != nil {
		return err
	}
	t := importtable.Table{Hosts: len(h.Import) > 0 || c.AnyImports}
	for _, v := range imports {
		if strings.HasPrefix(v, "npm:") {
			t.NPM = append(t.NPM, v)
		}
	}
	if c.Registry.Host != "" {
		if t.Std, err = StdPins(sdk.Config); err != nil {
			return err
		}
	}
	var cached []string
	for _, n := range names {
		why, probe := t.Refusal(n.spec)
		if why != "" {
			return fmt.Errorf("%w: %s%s", ErrRemoteImport, n.where(), why)
		}
		if probe {
			cached = append(cached, n.spec)
		}
	}
	if len(cached) > 0 {
		// The run loads them from the cache only: check they are there
		// now rather than fail mid-run.
		return c.probeCached(ctx, sdk, cached)
	}
	return nil
}

// importRef is a module the graph names that is not a local file: its
// specifier resolved through the SDK's import map, and the first import
// of it, as written and where (the importing file and its line, from 1;
// none for a module deno reports without a referrer).
type importRef struct {
	spec, written, file string
	line                int
}

// where says how the script imported the module, for a refusal: the import
// as written, when the import map changed it, and its file and line.
func (r importRef) where() string {
	var b strings.Builder
	if r.written != "" && r.written != r.spec {
		fmt.Fprintf(&b, "import %q, ", r.written)
	}
	if r.file != "" {
		fmt.Fprintf(&b, "line %d of %s: ", r.line, r.file)
	}
	return b.String()
}

func (e graphEntry) fresh() bool {
	for p, d := range e.files {
		if hashFile(p) != d {
			return false
		}
	}
	return true
}

// allowedModule checks one local file of the graph, lexically and after
// resolving symlinks.
func allowedModule(file, entry, sdkDir string, reads []permissions.Path) error {
	lexical, real, err := pathguard.Resolve(file)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUndeclaredImport, file, err)
	}
	if lexical == filepath.Clean(entry) || pathguard.Contains(sdkDir, lexical) && pathguard.Contains(sdkDir, real) {
		return nil
	}
	for _, p := range reads {
		if pathguard.Contains(p.Resolved, real) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s; add read=%s to its // @permissions line if it should", ErrUndeclaredImport, file, file)
}

// moduleFiles lists the local files of entry's module graph with deno info,
// which neither downloads (--no-remote, --no-npm) nor runs anything, and
// every other module the graph names (dynamic imports of a string literal
// included), resolved through the SDK's import map: jsr:, npm:, http(s):,
// node:, data:, blob: … specifiers, and as written, the bare names the
// map does not resolve.
func (c *Checker) moduleFiles(ctx context.Context, sdk SDK, entry string) (files []string, names []importRef, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	env, done, err := c.Launcher.ScratchEnv() // what deno keeps of the script's modules is not kept
	if err != nil {
		return nil, nil, err
	}
	defer done()
	// The entry goes as a file: URL: deno info reads a Windows path's drive
	// letter as a URL scheme (C:\s.ts is a module of scheme c:), where deno
	// run takes it as the file it is.
	cmd := exec.CommandContext(ctx, c.Deno, "info", "--json", "--no-lock", "--no-remote", "--no-npm", "--config="+sdk.Config, FileURL(entry))
	cmd.Env = env
	cmd.Dir = filepath.Dir(entry)
	out, err := cmd.Output()
	if derr := c.Launcher.StartErr(err); derr != nil {
		return nil, nil, derr
	}
	if err != nil {
		var ee *exec.ExitError
		detail := err.Error()
		if errors.As(err, &ee) {
			detail = LastLine(string(ee.Stderr))
		}
		return nil, nil, fmt.Errorf("runner: reading the script's imports: %s", detail)
	}
	type resolved struct {
		Specifier string `json:"specifier"`
		Error     string `json:"error"`
		Span      struct {
			Start struct {
				Line int `json:"line"` // from 0
			} `json:"start"`
		} `json:"span"`
	}
	var info struct {
		Modules []struct {
			Specifier    string `json:"specifier"`
			Local        string `json:"local"`
			Dependencies []struct {
				Specifier string    `json:"specifier"`
				Code      *resolved `json:"code"`
				Type      *resolved `json:"type"`
			} `json:"dependencies"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, nil, fmt.Errorf("runner: reading the script's imports: %w", err)
	}
	// The first import of each module, as written and where.
	firstImport := map[string]importRef{}
	seen := map[string]bool{}
	name := func(s string) {
		if !seen[s] {
			seen[s] = true
			ref := firstImport[s]
			ref.spec = s
			names = append(names, ref)
		}
	}
	for _, mod := range info.Modules {
		for _, d := range mod.Dependencies {
			for _, r := range []*resolved{d.Code, d.Type} {
				if r == nil {
					continue
				}
				key := r.Specifier
				if key == "" {
					key = d.Specifier // a name the import map does not resolve
				}
				if _, ok := firstImport[key]; !ok {
					firstImport[key] = importRef{written: d.Specifier, file: referrerName(mod.Specifier), line: r.Span.Start.Line + 1}
				}
			}
		}
	}
	for _, mod := range info.Modules {
		// A name the import map does not resolve has no module of its
		// own: deno reports it on the dependency.
		for _, d := range mod.Dependencies {
			for _, r := range []*resolved{d.Code, d.Type} {
				if r != nil && r.Specifier == "" && r.Error != "" {
					name(d.Specifier)
				}
			}
		}
		if !strings.HasPrefix(mod.Specifier, "file:") {
			name(mod.Specifier)
			continue
		}
		p := mod.Local
		if p == "" {
			if p, err = FilePath(mod.Specifier); err != nil {
				return nil, nil, fmt.Errorf("%w: %s", ErrUndeclaredImport, mod.Specifier)
			}
		}
		files = append(files, p)
	}
	return files, names, nil
}

// referrerName is how a refusal names an importing module: a local file by
// its base name, anything else by its specifier.
func referrerName(spec string) string {
	if strings.HasPrefix(spec, "file:") {
		if p, err := FilePath(spec); err == nil {
			return filepath.Base(p)
		}
	}
	return spec
}

// FileURL is the file: URL of the absolute path p: file:///C:/a/b.ts for
// C:\a\b.ts, file://server/share/b.ts for \\server\share\b.ts.
func FileURL(p string) string {
	s := filepath.ToSlash(p)
	u := url.URL{Scheme: "file", Path: s}
	if host, rest, ok := strings.Cut(strings.TrimPrefix(s, "//"), "/"); ok && strings.HasPrefix(s, "//") {
		u.Host, u.Path = host, "/"+rest
	} else if importtable.IsDrivePath(s) {
		u.Path = "/" + s
	}
	return u.String()
}

// FilePath is the local path a file: URL names, the inverse of FileURL.
func FilePath(spec string) (string, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return "", err
	}
	p := u.Path
	if importtable.IsDrivePath(strings.TrimPrefix(p, "/")) {
		p = strings.TrimPrefix(p, "/")
	} else if u.Host != "" && u.Host != "localhost" {
		p = "//" + u.Host + p
	}
	return filepath.FromSlash(p), nil
}
