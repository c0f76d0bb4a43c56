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
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

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
	t := importTable{hosts: len(h.Import) > 0 || len(m.cfg.DefaultImports) > 0}
	for _, v := range imports {
		if strings.HasPrefix(v, "npm:") {
			t.npm = append(t.npm, v)
		}
	}
	if m.jsr.host != "" {
		if t.std, err = stdPins(sdk.Config); err != nil {
			return err
		}
	}
	var cached []string
	for _, n := range names {
		why, probe := t.refusal(n.spec)
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

// importTable decides which module specifiers (resolved through the SDK's
// import map) a run may load. runner/sdk/rules.ts (importRefusal) states
// the same table for the offline testing kit;
// TestFakeHostRefusesImportsAsTheAppDoes holds the two together.
type importTable struct {
	hosts bool     // the run may import from some host (import=, DefaultImports)
	npm   []string // the SDK's own npm: packages, which deno's cache holds
	std   []stdPin // the @std packages cached from Config.JSR; none without it
}

// refusal says why a run cannot load spec, or "" when it can; probe
// reports a jsr: module the run loads from the module cache alone.
func (t importTable) refusal(spec string) (why string, probe bool) {
	scheme, _, ok := strings.Cut(spec, ":")
	if !ok || !schemeRe.MatchString(scheme) {
		return fmt.Sprintf("%q cannot be loaded: it is not a name this app maps; use %s, or a relative path (\"./lib.ts\") to a module copied next to the script", spec, t.names()), false
	}
	if isDrivePath(spec) {
		return fmt.Sprintf("%q cannot be loaded: deno reads a Windows path in an import as a URL of scheme %s:; import the module by a relative path (\"./lib.ts\") or a file: URL", spec, strings.ToLower(scheme)), false
	}
	switch scheme = strings.ToLower(scheme); scheme {
	case "file", "node", "data":
		return "", false
	case "blob":
		return spec + " cannot be loaded: a blob: URL exists only inside the run that made it; copy the code into a module next to the script and import that", false
	case "npm":
		if t.hosts || slices.Contains(t.npm, spec) {
			return "", false
		}
		return spec + " cannot be loaded: a run that may import no remote code gets npm: packages only from deno's cache, which holds the SDK's own; " + t.instead(), false
	case "jsr":
		name, version := "", ""
		if m := jsrSpecRe.FindStringSubmatch(spec); m != nil {
			name, version = m[1], m[2]
		}
		if len(t.std) == 0 && strings.HasPrefix(name, "@std/") && !t.hosts {
			return spec + " cannot be loaded: this app names no JSR registry, so its scripts have no @std packages; " +
				"the app's host sets one (runner.Config.JSR; the example host's --jsr URL), or " + t.instead(), false
		}
		if i := slices.IndexFunc(t.std, func(p stdPin) bool { return p.Name == name }); i >= 0 {
			if version == t.std[i].Version || t.hosts {
				// With a host to import from, deno fetches another
				// version itself (the run has no lock then).
				return "", version == t.std[i].Version && !t.hosts
			}
			return fmt.Sprintf("%s cannot be loaded: this app ships %s %s only; import it by its short name (\"%s\" or \"%s/…\")", spec, name, t.std[i].Version, name, name), false
		}
		fallthrough
	case "http", "https":
		if t.hosts {
			return "", false
		}
		return spec + " cannot be loaded, since this app gives runs no remote code" + t.note() + "; " + t.instead(), false
	}
	return fmt.Sprintf("%s cannot be loaded: deno loads no %s: modules; copy the module next to the script and import it by a relative path", spec, scheme), false
}

var schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// note says what remote code this app offers.
func (t importTable) note() string {
	if len(t.std) > 0 {
		return " beyond the @std packages it ships"
	}
	return " (the SDK bundles no @std modules)"
}

// names are the module names a script may import.
func (t importTable) names() string {
	if len(t.std) == 0 {
		return "\"tranquil/automation\""
	}
	return "one of the @std short names (" + t.stdNames() + ") or \"tranquil/automation\""
}

func (t importTable) stdNames() string {
	var n []string
	for _, p := range t.std {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// instead is the way out of a refused remote import.
func (t importTable) instead() string {
	use := "use Deno's own APIs"
	if len(t.std) > 0 {
		use = "use one of the @std short names (" + t.stdNames() + ") or Deno's own APIs"
	}
	return use + ", copy the module next to the script and import it by a relative path, or add import= for its host to the // @permissions line if the app allows that"
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
	} else if isDrivePath(s) {
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
	if isDrivePath(strings.TrimPrefix(p, "/")) {
		p = strings.TrimPrefix(p, "/")
	} else if u.Host != "" && u.Host != "localhost" {
		p = "//" + u.Host + p
	}
	return filepath.FromSlash(p), nil
}

// isDrivePath reports a path that starts with a drive letter and a
// separator, C:\ or C:/, which a URL parser takes for the scheme c:.
func isDrivePath(s string) bool {
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') &&
		('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}
