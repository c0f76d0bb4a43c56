package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// selectionLedger is <DataDir>/selections.json: the selection files of
// live runs (see selection.go), so that a host that died mid-run removes
// them on its next start.
type selectionLedger struct {
	path string
	mu   sync.Mutex // serialises this process's reads and writes of the file
}

// read returns the paths the ledger lists.
func (l *selectionLedger) read() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readLocked()
}

func (l *selectionLedger) readLocked() []string {
	var paths []string
	if data, err := os.ReadFile(l.path); err == nil {
		_ = json.Unmarshal(data, &paths)
	}
	return paths
}

// change rewrites the ledger with what change makes of its paths.
func (l *selectionLedger) change(change func([]string) []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, _ := json.Marshal(change(l.readLocked()))
	if err := os.WriteFile(l.path, data, 0o600); err != nil {
		return fmt.Errorf("runner: selection ledger: %w", err)
	}
	return nil
}
