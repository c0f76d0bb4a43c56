package runner

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

// ErrUndeclaredImport refuses a script whose module graph loads a local
// file that is neither the entry, the SDK, nor inside a read= grant. Deno
// loads static imports (including text and JSON imports) without any
// permission check, so the header alone would not stop them.
var ErrUndeclaredImport = errors.New("runner: the script imports a file it did not declare")

// ErrRemoteImport refuses a script whose module graph, statically or by
// a dynamic import of a string literal, names a module its run cannot
// load: remote code (jsr:, http:, https:, npm:) when the run may import
// none (no import= grant, no Config.DefaultImports), a jsr: module other
// than the @std packages the SDK pins (at their pinned versions, from
// Config.JSR's cache), a bare name the SDK's import map does not map, a
// blob: URL, or a scheme deno does not load. The message says what to do
// instead. node: built-ins and data: URLs load in every run.
var ErrRemoteImport = errors.New("runner: the script imports code its run cannot load")

// graphCache remembers passed checks. An entry stays valid while every
// local file of the graph keeps its content (SHA-256) and the header is
// unchanged. Size and modification time are no key: a script that may
// write a module can keep both (Deno.utimeSync) while changing what the
// module imports.
type graphCache struct {
	mu      sync.Mutex
	entries map[string]graphEntry
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

func (c *graphCache) check(ctx context.Context, m *Manager, sdk SDKPaths, h *permissions.Header, entry string) error {
	// The granted trees are checked for links every time, cached or not:
	// a link can appear at any moment.
	if err := m.checkGrantTrees(h); err != nil {
		return err
	}
	canonical := h.Canonical()
	c.mu.Lock()
	e, ok := c.entries[entry]
	c.mu.Unlock()
	if ok && e.header == canonical && e.fresh() {
		return nil
	}
	files, names, err := moduleFiles(ctx, m, sdk, entry)
	if err != nil {
		return err
	}
	if err := m.checkImports(ctx, sdk, h, names); err != nil {
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
func (m *Manager) checkImports(ctx context.Context, sdk SDKPaths, h *permissions.Header, names []importRef) error {
	if len(names) == 0 {
		return nil
	}
	imports, err := sdkImports(sdk.Config)
	if err != nil {
		return err
	}
	t := importtable.Table{Hosts: len(h.Import) > 0 || len(m.cfg.DefaultImports) > 0}
	for _, v := range imports {
		if strings.HasPrefix(v, "npm:") {
			t.NPM = append(t.NPM, v)
		}
	}
	if m.jsr.host != "" {
		if t.Std, err = stdPins(sdk.Config); err != nil {
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
		return m.probeCached(ctx, sdk, cached)
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
func moduleFiles(ctx context.Context, m *Manager, sdk SDKPaths, entry string) (files []string, names []importRef, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	env, done, err := m.scratchEnv() // what deno keeps of the script's modules is not kept
	if err != nil {
		return nil, nil, err
	}
	defer done()
	// The entry goes as a file: URL: deno info reads a Windows path's drive
	// letter as a URL scheme (C:\s.ts is a module of scheme c:), where deno
	// run takes it as the file it is.
	cmd := exec.CommandContext(ctx, m.deno, "info", "--json", "--no-lock", "--no-remote", "--no-npm", "--config="+sdk.Config, fileURL(entry))
	cmd.Env = env
	cmd.Dir = filepath.Dir(entry)
	out, err := cmd.Output()
	if derr := m.denoStartErr(err); derr != nil {
		return nil, nil, derr
	}
	if err != nil {
		var ee *exec.ExitError
		detail := err.Error()
		if errors.As(err, &ee) {
			detail = lastLine(string(ee.Stderr))
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
			if p, err = filePath(mod.Specifier); err != nil {
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
		if p, err := filePath(spec); err == nil {
			return filepath.Base(p)
		}
	}
	return spec
}

// fileURL is the file: URL of the absolute path p: file:///C:/a/b.ts for
// C:\a\b.ts, file://server/share/b.ts for \\server\share\b.ts.
func fileURL(p string) string {
	s := filepath.ToSlash(p)
	u := url.URL{Scheme: "file", Path: s}
	if host, rest, ok := strings.Cut(strings.TrimPrefix(s, "//"), "/"); ok && strings.HasPrefix(s, "//") {
		u.Host, u.Path = host, "/"+rest
	} else if importtable.IsDrivePath(s) {
		u.Path = "/" + s
	}
	return u.String()
}

// filePath is the local path a file: URL names, the inverse of fileURL.
func filePath(spec string) (string, error) {
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
