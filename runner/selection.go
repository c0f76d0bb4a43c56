package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/permissions"
)

// Run-selection writes the selected text to <source dir>/.runs/<run
// ID>--<source name>, at its own lines and columns of the source (blank
// lines and spaces before it), so relative imports and the lines errors
// name are where the user expects, and deletes it when the run ends. The path is also recorded in
// <DataDir>/selections.json until then, so a host that died mid-run removes
// the file on its next start.
//
// Deno reads the file some time after it is written, so nothing but the
// runner may write there meanwhile: no grant may lie in a .runs folder or
// reach a live selection file (checkGrantTrees), a selection is refused
// while another live run's write= grants or the links under them reach
// it, and the folder and file are made fresh, never through a link.

// selectionDir is the folder beside a script that holds its selections.
const selectionDir = ".runs"

// ErrUnsafeSelection refuses a selection whose folder is not a plain
// directory (a link could send the file anywhere).
var ErrUnsafeSelection = errors.New("runner: the selection folder is not a plain directory")

// selectionName is the selection file's name for a run of source: the
// run's ID, then "--" and the source's own name, so that the bootstrap
// can name the source in the script's frames (its setSourceOf). A source
// whose name deno would not read as a module keeps the plain <run ID>.ts.
func selectionName(source, runID string) string {
	base := filepath.Base(source)
	switch filepath.Ext(base) {
	case ".ts", ".mts", ".js", ".mjs":
		return runID + "--" + base
	}
	return runID + ".ts"
}

// selectionText is what the selection file holds: sel's text after blank
// lines and spaces that put it at its place in the source file, so that
// a line and column deno reports are the source's. Where the host did not
// say, the text's first place in source is taken; failing that, the top.
func selectionText(source string, sel *Selection) string {
	line, col := sel.Line, sel.Column
	if line <= 0 {
		line, col = 1, 1
		if b, err := os.ReadFile(source); err == nil && sel.Text != "" {
			if i := strings.Index(string(b), sel.Text); i >= 0 {
				before := string(b[:i])
				line = strings.Count(before, "\n") + 1
				col = utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
			}
		}
	}
	return strings.Repeat("\n", line-1) + strings.Repeat(" ", max(col, 1)-1) + sel.Text
}

func (m *Manager) writeSelection(source, runID string, sel *Selection) (path string, cleanup func(), err error) {
	text := selectionText(source, sel)
	dir := filepath.Join(filepath.Dir(source), selectionDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", nil, fmt.Errorf("runner: selection: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil {
		return "", nil, fmt.Errorf("runner: selection: %w", err)
	} else if !fi.IsDir() || isLink(fi.Mode()) {
		return "", nil, fmt.Errorf("%w: %s", ErrUnsafeSelection, dir)
	}
	path = filepath.Join(dir, selectionName(source, runID))
	// Recorded before the live runs are looked at: a run whose check reads
	// the ledger after this sees the file; one that read it before has
	// recorded what it reaches, and is seen below.
	if err := m.ledger(func(l []string) []string { return append(l, path) }); err != nil {
		return "", nil, err
	}
	if err := m.reach.refuse(m, runID, path); err != nil {
		m.dropSelection(path)
		return "", nil, err
	}
	// O_EXCL: a file or link already at this name is never written through.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		m.dropSelection(path)
		return "", nil, fmt.Errorf("runner: selection: %w", err)
	}
	return path, func() { m.dropSelection(path) }, nil
}

// liveSelections returns the selection files of live runs, as the ledger
// records them and with links resolved.
func (m *Manager) liveSelections() []string {
	var out []string
	for _, p := range m.selections.read() {
		if !filepath.IsAbs(p) {
			continue
		}
		out = append(out, filepath.Clean(p))
		if _, real, err := pathguard.Resolve(p); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// reachTable records, per checked header, the paths its write= grants
// reach: each grant as written and resolved, and every link target under
// them. A selection consults it to refuse being written where a live run
// could rewrite it.
type reachTable struct {
	mu     sync.Mutex
	writes map[*permissions.Header][]string
}

// record stores what h's write grants reach, dropping headers of runs
// that are no longer live (Plan's checks among them).
func (t *reachTable) record(m *Manager, h *permissions.Header, roots []string) {
	live := m.liveHeaders()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.writes == nil {
		t.writes = map[*permissions.Header][]string{}
	}
	for k := range t.writes {
		if !live[k] {
			delete(t.writes, k)
		}
	}
	t.writes[h] = roots
}

// refuse reports a live run other than runID whose write grants reach the
// selection file path.
func (t *reachTable) refuse(m *Manager, runID, path string) error {
	targets := []string{path}
	if _, real, err := pathguard.Resolve(path); err == nil {
		targets = append(targets, real)
	}
	for _, r := range m.Runs() {
		if r.id == runID {
			continue
		}
		r.mu.Lock()
		h := r.header
		r.mu.Unlock()
		if h == nil {
			continue
		}
		t.mu.Lock()
		roots := t.writes[h]
		t.mu.Unlock()
		for _, root := range append(roots, writeGrants(h)...) {
			for _, p := range targets {
				if pathguard.Contains(root, p) {
					return &GrantError{Grant: fmt.Sprintf("write= of the live run %s (%s)", r.id, r.req.Script), Reaches: p, Target: root, Err: ErrSelectionReachable}
				}
			}
		}
	}
	return nil
}

// writeGrants lists h's write= paths as written and resolved.
func writeGrants(h *permissions.Header) []string {
	var out []string
	for _, w := range h.Write {
		out = append(out, w.Lexical, w.Resolved)
	}
	return out
}

// liveHeaders is the set of headers of live runs.
func (m *Manager) liveHeaders() map[*permissions.Header]bool {
	live := map[*permissions.Header]bool{}
	for _, r := range m.Runs() {
		r.mu.Lock()
		if r.header != nil {
			live[r.header] = true
		}
		r.mu.Unlock()
	}
	return live
}

func (m *Manager) dropSelection(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.log.Warn("runner: removing selection file", "path", path, "error", err)
		return
	}
	os.Remove(filepath.Dir(path)) // only if empty
	m.ledger(func(l []string) []string { return slices.DeleteFunc(l, func(p string) bool { return p == path }) })
}

// cleanSelections removes selection files a previous host left behind.
func (m *Manager) cleanSelections() {
	var stale []string
	m.ledger(func(l []string) []string { stale = l; return nil })
	for _, p := range stale {
		if filepath.Base(filepath.Dir(p)) != selectionDir {
			continue // never delete anything the ledger did not create
		}
		if err := os.Remove(p); err == nil || errors.Is(err, fs.ErrNotExist) {
			os.Remove(filepath.Dir(p))
		}
	}
}

func (m *Manager) ledger(change func([]string) []string) error {
	return m.selections.change(change)
}
