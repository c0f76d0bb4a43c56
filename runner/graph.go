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

// ErrRemoteImport refuses a script whose module graph loads remote code
// (a jsr: specifier such as an @std module, or an https: URL) its run
// could only fail to load: with no import= grant and no
// Config.DefaultImports, deno runs with --no-remote, or, with Config.JSR,
// loads jsr: modules from the module cache alone and the module is not
// there.
var ErrRemoteImport = errors.New("runner: the script imports remote code its run may not load")

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
	files, remote, err := moduleFiles(ctx, m, sdk, entry)
	if err != nil {
		return err
	}
	if len(remote) > 0 && len(h.Import) == 0 && len(m.cfg.DefaultImports) == 0 {
		if m.jsr.host == "" || slices.ContainsFunc(remote, func(s string) bool { return !strings.HasPrefix(s, "jsr:") }) {
			return fmt.Errorf("%w: %s cannot be loaded, since this app gives runs no remote code%s; use Deno's own APIs instead, or add import= for its host to the // @permissions line if the app allows that",
				ErrRemoteImport, strings.Join(remote, ", "), m.remoteNote())
		}
		// The run loads jsr: modules from the cache only: check they are
		// there now rather than fail mid-run.
		if err := m.probeCached(ctx, remote); err != nil {
			return err
		}
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

// remoteNote says what this app offers instead of remote code.
func (m *Manager) remoteNote() string {
	if m.jsr.host != "" {
		return " beyond the cached @std packages its SDK maps"
	}
	return " (the SDK bundles no @std modules)"
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
// the remote (jsr:, http:, https:) modules it names.
func moduleFiles(ctx context.Context, m *Manager, sdk SDKPaths, entry string) (files, remote []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.deno, "info", "--json", "--no-lock", "--no-remote", "--no-npm", "--config="+sdk.Config, entry)
	cmd.Env = m.baseEnv()
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
	var info struct {
		Modules []struct {
			Specifier string `json:"specifier"`
			Local     string `json:"local"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, nil, fmt.Errorf("runner: reading the script's imports: %w", err)
	}
	for _, mod := range info.Modules {
		if scheme, _, _ := strings.Cut(mod.Specifier, ":"); scheme == "jsr" || scheme == "http" || scheme == "https" {
			remote = append(remote, mod.Specifier)
			continue
		}
		if !strings.HasPrefix(mod.Specifier, "file:") {
			continue
		}
		p := mod.Local
		if p == "" {
			u, err := url.Parse(mod.Specifier)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %s", ErrUndeclaredImport, mod.Specifier)
			}
			p = filepath.FromSlash(u.Path)
		}
		files = append(files, p)
	}
	return files, remote, nil
}
