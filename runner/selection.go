package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Run-selection writes the selected text to <source dir>/.runs/<run ID>.ts,
// so relative imports and stack traces point where the user expects, and
// deletes it when the run ends. The path is also recorded in
// <DataDir>/selections.json until then, so a host that died mid-run removes
// the file on its next start.

func (m *Manager) ledgerPath() string { return filepath.Join(m.cfg.DataDir, "selections.json") }

func (m *Manager) writeSelection(source, runID, text string) (path string, cleanup func(), err error) {
	dir := filepath.Join(filepath.Dir(source), ".runs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("runner: selection: %w", err)
	}
	path = filepath.Join(dir, runID+".ts")
	if err := m.ledger(func(l []string) []string { return append(l, path) }); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		m.dropSelection(path)
		return "", nil, fmt.Errorf("runner: selection: %w", err)
	}
	return path, func() { m.dropSelection(path) }, nil
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
		if filepath.Base(filepath.Dir(p)) != ".runs" {
			continue // never delete anything the ledger did not create
		}
		if err := os.Remove(p); err == nil || errors.Is(err, fs.ErrNotExist) {
			os.Remove(filepath.Dir(p))
		}
	}
}

func (m *Manager) ledger(change func([]string) []string) error {
	m.selMu.Lock()
	defer m.selMu.Unlock()
	var l []string
	if data, err := os.ReadFile(m.ledgerPath()); err == nil {
		_ = json.Unmarshal(data, &l)
	}
	l = change(l)
	data, _ := json.Marshal(l)
	if err := os.WriteFile(m.ledgerPath(), data, 0o600); err != nil {
		return fmt.Errorf("runner: selection ledger: %w", err)
	}
	return nil
}
