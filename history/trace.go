package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tranquil/automation/internal/atomicfile"
)

// Defaults for the trace caps of Options.
const (
	DefaultTraceCap   = 16 << 20
	DefaultTraceTotal = 256 << 20
)

// ErrNoRun reports a trace for a run the Store does not hold: PutTrace
// before the run's first Put, or after it was evicted.
var ErrNoRun = errors.New("history: no such run")

// ErrNoTrace reports a run stored without a trace.
var ErrNoTrace = errors.New("history: the run has no trace")

// ErrTraceTooLarge reports a trace over Options.TraceCap; it is not
// stored.
var ErrTraceTooLarge = errors.New("history: the trace is larger than the cap")

// TraceCorruptError reports a trace file that is not what PutTrace wrote:
// cut, changed, or another run's. It wraps [ErrCorrupt]. The file is left
// for the run's eviction to remove.
type TraceCorruptError struct {
	ID     string // the run
	Path   string
	Reason string
}

func (e *TraceCorruptError) Error() string {
	return fmt.Sprintf("history: trace of run %s (%s) is corrupt: %s", e.ID, e.Path, e.Reason)
}

// Unwrap makes a TraceCorruptError match ErrCorrupt.
func (e *TraceCorruptError) Unwrap() error { return ErrCorrupt }

// traceMagic starts a trace file's header line.
const traceMagic = "tranquil-history-trace/1"

// maxTraceHeader bounds a trace file's header line (magic, checksum,
// length, the run's ID as JSON).
const maxTraceHeader = 4 << 10

// traceDir is where a Store keeps its traces: beside the journal, one
// file a run, so a run's trace is read and removed without touching the
// journal.
func (s *Store) traceDir() string { return s.path + ".traces" }

// tracePath names a run's trace by a hash of its ID, since an ID may hold
// any character.
func (s *Store) tracePath(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(s.traceDir(), hex.EncodeToString(sum[:16])+".trace")
}

// PutTrace stores data as the trace of run id, replacing any it had,
// durably. The run must be stored already (else [ErrNoRun]); data must be
// at most Options.TraceCap bytes (else [ErrTraceTooLarge]). The trace is
// removed with the run. When the traces together pass
// Options.TraceTotal, those of the oldest runs are removed first, never
// this one. History does not read data: it is the caller's encoding.
func (s *Store) PutTrace(id string, data []byte) error {
	if int64(len(data)) > s.traceCap {
		return fmt.Errorf("%w: run %s: %d bytes, cap %d", ErrTraceTooLarge, id, len(data), s.traceCap)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.syncLocked(true); err != nil {
		return err
	}
	if _, ok := s.runs.byID[id]; !ok {
		return fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	if err := os.MkdirAll(s.traceDir(), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := atomicfile.WriteFile(s.tracePath(id), encodeTrace(id, data), 0o600); err != nil {
		return fmt.Errorf("history: storing trace: %w", err)
	}
	s.trimTracesLocked(id)
	return nil
}

// Trace returns the trace PutTrace stored for run id: [ErrNoRun] when the
// run is not held, [ErrNoTrace] when it has none, a
// [*TraceCorruptError] when its file is not what PutTrace wrote.
func (s *Store) Trace(id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	if _, ok := s.runs.byID[id]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	path := s.tracePath(id)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", ErrNoTrace, id)
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	// A file longer than any PutTrace writes is refused unread.
	raw, err := io.ReadAll(io.LimitReader(f, s.traceCap+maxTraceHeader+1))
	if err != nil {
		return nil, fmt.Errorf("history: reading trace: %w", err)
	}
	data, err := decodeTrace(id, raw)
	if err != nil {
		return nil, &TraceCorruptError{ID: id, Path: path, Reason: err.Error()}
	}
	return data, nil
}

// encodeTrace is a trace file: a header line (magic, CRC-32C of data in
// hex, data's length, the run's ID as JSON), then data.
func encodeTrace(id string, data []byte) []byte {
	idJSON, _ := json.Marshal(id)
	h := fmt.Sprintf("%s %08x %d %s\n", traceMagic, crc32.Checksum(data, castagnoli), len(data), idJSON)
	return append([]byte(h), data...)
}

// decodeTrace checks a trace file of run id and returns its data. Its
// errors say what is wrong.
func decodeTrace(id string, raw []byte) ([]byte, error) {
	nl := bytes.IndexByte(raw[:min(len(raw), maxTraceHeader)], '\n')
	if nl < 0 {
		return nil, errors.New("no header line")
	}
	fields := strings.SplitN(string(raw[:nl]), " ", 4)
	if len(fields) != 4 || fields[0] != traceMagic {
		return nil, errors.New("bad header")
	}
	sum, err := strconv.ParseUint(fields[1], 16, 32)
	if err != nil || fmt.Sprintf("%08x", sum) != fields[1] {
		return nil, errors.New("bad checksum field")
	}
	n, err := strconv.Atoi(fields[2])
	if err != nil || n < 0 || strconv.Itoa(n) != fields[2] {
		return nil, errors.New("bad length field")
	}
	if want, _ := json.Marshal(id); fields[3] != string(want) {
		return nil, errors.New("it is another run's trace")
	}
	data := raw[nl+1:]
	if len(data) != n {
		return nil, fmt.Errorf("%d bytes of data, the header says %d", len(data), n)
	}
	if crc32.Checksum(data, castagnoli) != uint32(sum) {
		return nil, errors.New("checksum mismatch")
	}
	return data, nil
}

// dropTracesLocked removes the traces of runs held in before and no
// longer held: the runs a Put evicted. Failures only leave a file for the
// next PutTrace's trim to remove.
func (s *Store) dropTracesLocked(before *set) {
	if before == s.runs {
		return
	}
	for id := range before.byID {
		if _, ok := s.runs.byID[id]; !ok {
			if err := os.Remove(s.tracePath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.log.Warn("history: removing an evicted run's trace", "run", id, "error", err)
			}
		}
	}
}

// trimTracesLocked removes trace files of runs no longer held (another
// process evicted them, or this one failed to), then the traces of the
// oldest runs until all fit in the total cap, sparing run keep's.
func (s *Store) trimTracesLocked(keep string) {
	dir := s.traceDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		s.log.Warn("history: listing traces", "error", err)
		return
	}
	byName := map[string]Entry{}
	for id, e := range s.runs.byID {
		byName[filepath.Base(s.tracePath(id))] = e
	}
	type held struct {
		e    Entry
		size int64
	}
	var kept []held
	var total int64
	remove := func(name string) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("history: removing a trace", "file", name, "error", err)
		}
	}
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(name, ".trace") {
			continue
		}
		e, ok := byName[name]
		if !ok {
			remove(name)
			continue
		}
		if fi, err := de.Info(); err == nil {
			kept = append(kept, held{e, fi.Size()})
			total += fi.Size()
		}
	}
	slices.SortFunc(kept, func(a, b held) int { return newer(b.e, a.e) }) // oldest first
	for _, h := range kept {
		if total <= s.traceTotal {
			break
		}
		if h.e.ID == keep {
			continue
		}
		remove(filepath.Base(s.tracePath(h.e.ID)))
		total -= h.size
	}
}
