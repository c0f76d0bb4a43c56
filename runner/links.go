package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/permissions"
)

// Errors of the grant check that runs before every run. Each comes as a
// *GrantError naming the grant, and the link when there is one.
var (
	// ErrLinkToHostData: a read= or write= tree holds a link that resolves
	// into the host's own data (its data dir, module cache, SDK, consent
	// store or key). Deno checks grants on the path as written and then
	// follows links, so such a link would hand the script the host's data.
	ErrLinkToHostData = errors.New("runner: a granted folder holds a link into the host's own data")
	// ErrSelectionReachable: a grant reaches where run-selection files are
	// written (any .runs folder), or a live selection file, which another
	// run could then rewrite before deno loads it.
	ErrSelectionReachable = errors.New("runner: a grant reaches run-selection files")
	// ErrGrantTooLarge: the granted trees could not all be checked within
	// the bounds (MaxGrantEntries entries, MaxGrantWalk). What cannot be
	// checked is refused.
	ErrGrantTooLarge = errors.New("runner: a granted folder is too large to check for links")
)

// Bounds of the walk of granted trees, per run.
const (
	MaxGrantEntries = 100_000
	MaxGrantWalk    = 2 * time.Second
)

// GrantError is a grant the runner refused before starting deno.
type GrantError struct {
	Grant   string // as declared, such as "write=cache"
	Link    string // the link on the way, if any
	Target  string // what Link resolves to
	Reaches string // the protected path, selection file or folder it reaches
	Err     error  // ErrLinkToHostData, ErrSelectionReachable or ErrGrantTooLarge
}

func (e *GrantError) Error() string {
	via := ""
	if e.Link != "" {
		via = fmt.Sprintf(" through the link %s (to %s)", e.Link, e.Target)
	}
	switch e.Err {
	case ErrLinkToHostData:
		return fmt.Sprintf("runner: %s reaches %s%s, which holds the host's own data; deno follows links, so remove the link or narrow the grant", e.Grant, e.Reaches, via)
	case ErrSelectionReachable:
		return fmt.Sprintf("runner: %s reaches %s%s, where run-selection files are written; no grant may, since a run holding it could rewrite another run's selection before deno loads it", e.Grant, e.Reaches, via)
	case ErrGrantTooLarge:
		return fmt.Sprintf("runner: %s could not be checked for links into the host's data within %d entries and %s (reached %s); grant a smaller folder", e.Grant, MaxGrantEntries, MaxGrantWalk, e.Reaches)
	}
	return fmt.Sprintf("runner: %s: %v", e.Grant, e.Err)
}

func (e *GrantError) Unwrap() error { return e.Err }

// treeCheck walks a run's granted trees. Every directory is read once, so
// links that loop end, and every entry counts against the bounds.
type treeCheck struct {
	protected []string // clean absolute paths, lexical and real
	left      int
	deadline  time.Time
	seen      map[string]bool
	write     bool    // the grant being walked is a write= grant
	reach     []reach // what the write= grants reach
}

// reach is a path a write= grant reaches: the grant itself, or a link's
// target under it.
type reach struct{ grant, link, path string }

// checkGrantTrees refuses a run whose read= or write= grants reach the
// host's data through links, or reach run-selection files at all. It runs
// for every check and is never cached: a link can appear at any time.
func (m *Manager) checkGrantTrees(h *permissions.Header) error {
	return m.checkGrantTreesWithin(h, MaxGrantEntries, MaxGrantWalk)
}

func (m *Manager) checkGrantTreesWithin(h *permissions.Header, entries int, d time.Duration) error {
	c := &treeCheck{left: entries, deadline: time.Now().Add(d), seen: map[string]bool{}}
	for _, p := range m.protected {
		_, real, err := pathguard.Resolve(p)
		if err != nil {
			return fmt.Errorf("runner: %w", err)
		}
		c.protected = append(c.protected, filepath.Clean(p), real)
	}
	if err := c.run(h); err != nil {
		return err
	}
	// Recorded before the ledger is read; see writeSelection for why.
	paths := make([]string, len(c.reach))
	for i, r := range c.reach {
		paths[i] = r.path
	}
	m.reach.record(m, h, paths)
	for _, sel := range m.liveSelections() {
		for _, r := range c.reach {
			if pathguard.Contains(r.path, sel) {
				return &GrantError{Grant: r.grant, Link: r.link, Target: r.path, Reaches: sel, Err: ErrSelectionReachable}
			}
		}
	}
	return nil
}

func (c *treeCheck) run(h *permissions.Header) error {
	// Write grants first: a directory is read once, and only a write walk
	// records what it reaches.
	c.write = true
	for _, g := range h.Write {
		if err := c.grant("write="+g.Declared, g); err != nil {
			return err
		}
	}
	c.write = false
	for _, g := range h.Read {
		if err := c.grant("read="+g.Declared, g); err != nil {
			return err
		}
	}
	return nil
}

func (c *treeCheck) grant(label string, g permissions.Path) error {
	// A .runs folder anywhere on the grant's path, as written or resolved.
	for _, p := range []string{g.Lexical, g.Resolved} {
		if dir, ok := runsFolder(p); ok {
			return &GrantError{Grant: label, Reaches: dir, Err: ErrSelectionReachable}
		}
	}
	// Resolve again: deno is granted g.Resolved as written, and a link
	// that appeared on that path since the header was read leads on.
	_, real, err := pathguard.Resolve(g.Resolved)
	if err != nil {
		return &GrantError{Grant: label, Reaches: g.Resolved, Err: err}
	}
	if c.write {
		c.reach = append(c.reach, reach{label, "", g.Lexical}, reach{label, "", g.Resolved}, reach{label, "", real})
	}
	if real != g.Resolved {
		if err := c.target(label, g.Resolved, real); err != nil {
			return err
		}
	}
	return c.walk(label, real)
}

// walk reads every directory under root, following the links it meets.
func (c *treeCheck) walk(label, root string) error {
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing there yet, and a script cannot make links
	}
	if err != nil {
		return &GrantError{Grant: label, Reaches: root, Err: err}
	}
	if isLink(fi.Mode()) {
		return c.link(label, root)
	}
	if !fi.IsDir() {
		return nil
	}
	queue := []string{root}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if c.seen[dir] {
			continue
		}
		c.seen[dir] = true
		more, err := c.readDir(label, dir)
		if err != nil {
			return err
		}
		queue = append(queue, more...)
	}
	return nil
}

// readDir checks one directory's entries and returns its subdirectories
// and the directories its links lead to. It reads in batches, so a huge
// directory meets the bounds without being read whole.
func (c *treeCheck) readDir(label, dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // gone since it was listed
	}
	if err != nil {
		return nil, &GrantError{Grant: label, Reaches: dir, Err: err}
	}
	defer f.Close()
	var dirs []string
	for {
		entries, err := f.ReadDir(256)
		for _, e := range entries {
			c.left--
			if c.left < 0 || time.Now().After(c.deadline) {
				return nil, &GrantError{Grant: label, Reaches: dir, Err: ErrGrantTooLarge}
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case isLink(e.Type()):
				next, err := c.linkTarget(label, p)
				if err != nil {
					return nil, err
				}
				if next != "" {
					dirs = append(dirs, next)
				}
			case e.IsDir():
				dirs = append(dirs, p)
			}
		}
		if errors.Is(err, io.EOF) {
			return dirs, nil
		}
		if err != nil {
			return nil, &GrantError{Grant: label, Reaches: dir, Err: err}
		}
	}
}

func (c *treeCheck) link(label, p string) error {
	next, err := c.linkTarget(label, p)
	if err != nil || next == "" {
		return err
	}
	return c.walk(label, next)
}

// linkTarget checks where the link at p leads and returns it when it is a
// directory still to walk.
func (c *treeCheck) linkTarget(label, p string) (string, error) {
	_, real, err := pathguard.Resolve(p)
	if err != nil {
		if fi, serr := os.Stat(p); runtime.GOOS == "windows" && serr == nil && !fi.IsDir() {
			return "", nil // a reparse point that is no link, such as a cloud file
		}
		return "", &GrantError{Grant: label, Link: p, Reaches: p, Err: err}
	}
	if err := c.target(label, p, real); err != nil {
		return "", err
	}
	if kernelFS(real) {
		return "", nil
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return real, nil
	}
	return "", nil
}

// target refuses a link whose real path overlaps a protected path (inside
// it, or holding it) or an opening onto every file, or lies in a .runs
// folder.
func (c *treeCheck) target(label, link, real string) error {
	for _, p := range everywhere() {
		if pathguard.Contains(p, real) || pathguard.Contains(real, p) {
			return &GrantError{Grant: label, Link: link, Target: real, Reaches: p + ", and through it every file", Err: ErrLinkToHostData}
		}
	}
	for _, p := range c.protected {
		if pathguard.Contains(p, real) || pathguard.Contains(real, p) {
			return &GrantError{Grant: label, Link: link, Target: real, Reaches: p, Err: ErrLinkToHostData}
		}
	}
	if dir, ok := runsFolder(real); ok {
		return &GrantError{Grant: label, Link: link, Target: real, Reaches: dir, Err: ErrSelectionReachable}
	}
	if c.write {
		c.reach = append(c.reach, reach{label, link, real})
	}
	return nil
}

// isLink reports a symlink, or on Windows a junction or other reparse
// point, which os reports as irregular.
func isLink(m fs.FileMode) bool {
	return m&fs.ModeSymlink != 0 || runtime.GOOS == "windows" && m&fs.ModeIrregular != 0
}

// everywhere lists the folders through which a link reaches every file:
// on Linux, /proc (/proc/self/root is /, /proc/self/cwd and fd/N lead
// anywhere) and /dev/fd. Deno refuses paths that resolve into /proc, but
// it resolves granted/proc/self/root/x to /x first, so a link into /proc
// is as wide as a link to /.
func everywhere() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	return []string{"/proc", "/dev/fd"}
}

// kernelFS reports a path under Linux's /dev or /sys. Deno refuses to open
// anything that resolves there without --allow-all, which no run gets,
// and the links in them that lead out are refused by everywhere, so the
// walk need not follow links into them.
func kernelFS(p string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	return slices.ContainsFunc([]string{"/dev", "/sys"}, func(d string) bool { return pathguard.Contains(d, p) })
}

// runsFolder returns the first .runs folder on p, if any.
func runsFolder(p string) (string, bool) {
	vol := filepath.VolumeName(p)
	parts := strings.Split(p[len(vol):], string(filepath.Separator))
	for i, part := range parts {
		if part == selectionDir {
			return vol + strings.Join(parts[:i+1], string(filepath.Separator)), true
		}
	}
	return "", false
}
