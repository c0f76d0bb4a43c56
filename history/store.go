package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/internal/atomicfile"
	"github.com/tranquil/automation/internal/filelock"
)

// Defaults for Options.
const (
	DefaultCapacity    = 100
	DefaultLockTimeout = 30 * time.Second
)

// ErrClosed reports a Put on a closed Store.
var ErrClosed = errors.New("history: store is closed")

// ErrTrimmed reports a finished run stored without all of it: the full
// entry could not be written (a full disk, say), so Put stored it again
// with less (its output cut to the tail, then without output and action
// log, then without result). Its state, reason, exit and times are stored:
// an error wrapping ErrTrimmed means the run's outcome is safe, and Get
// returns the entry as stored.
var ErrTrimmed = errors.New("history: the run was stored without all of its output")

// Options configures a Store. The zero value is usable.
type Options struct {
	// Capacity is how many runs are kept. Zero or less means
	// DefaultCapacity.
	Capacity int
	// Logger receives warnings, such as a corrupt file moved aside. Nil
	// means slog.Default().
	Logger *slog.Logger
	// LockTimeout bounds how long Put waits for another process holding
	// the file's write lock. Zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// TraceCap bounds one run's trace (see [Store.PutTrace]), in bytes.
	// Zero or less means DefaultTraceCap.
	TraceCap int64
	// TraceTotal bounds all traces together; past it the oldest runs'
	// traces are removed. Zero or less means DefaultTraceTotal; it is
	// never below TraceCap.
	TraceTotal int64
	// EntryCap bounds one stored entry, in bytes of its journal line (its
	// JSON, escapes included): Put fits a larger one by cutting its output
	// in the middle (see [Store.Put]). Zero or less means DefaultEntryCap
	// (2 MiB); it is never below MinEntryCap (64 KiB).
	EntryCap int
	// MaxBytes bounds the journal file: the runs kept take at most half of
	// it, the oldest finished ones evicted first even under Capacity, and
	// Put rewrites the file before an append would pass it. Zero or less
	// means DefaultMaxBytes (128 MiB); it is never below 4 × EntryCap.
	MaxBytes int64
}

// Store keeps the newest runs in memory and in a journal file at a
// host-given path. It is safe for concurrent use, by several goroutines and
// by several processes sharing the file, and starts no goroutines.
//
// Put appends one checksummed line and syncs it before returning, so a run
// Put reported stored survives a crash of the process or the machine.
// When the journal would hold more than twice Capacity lines or pass
// Options.MaxBytes it is rewritten whole, atomically. Writers serialise on a lock file beside the journal
// (path + ".lock") and first read what other processes appended, so every
// Store sees every write; Get and List also pick up other processes'
// writes.
type Store struct {
	path        string
	log         *slog.Logger
	lockTimeout time.Duration
	traceCap    int64
	traceTotal  int64
	entryCap    int
	maxBytes    int64

	mu     sync.Mutex // guards everything below it, and the file within this process
	closed bool
	runs   *set
	gen    string // generation of the file runs reflects; "" means rewrite on the next Put
	size   int64  // bytes of complete lines of that file read so far
	lines  int    // entry lines in that file

	seq uint64 // number of the next stored Put, for notification order

	notifyMu   sync.Mutex // guards turn
	notifyCond *sync.Cond // signalled when turn advances
	turn       uint64     // the Put whose subscribers run next

	subMu   sync.Mutex // guards subs and nextSub
	subs    map[int]func(Entry)
	nextSub int
}

// Open opens the history at path, creating its directory (mode 0700) if
// needed; the file itself (mode 0600) appears with the first Put. A corrupt
// file is moved aside to path + ".corrupt-<UTC timestamp>", reported
// through the logger, and the Store starts empty. A torn last line left by
// a writer that died mid-append is not corruption; it is dropped.
func Open(path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.TraceCap <= 0 {
		opts.TraceCap = DefaultTraceCap
	}
	if opts.TraceTotal <= 0 {
		opts.TraceTotal = DefaultTraceTotal
	}
	if opts.EntryCap <= 0 {
		opts.EntryCap = DefaultEntryCap
	}
	opts.EntryCap = max(opts.EntryCap, MinEntryCap)
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	opts.MaxBytes = max(opts.MaxBytes, 4*int64(opts.EntryCap))
	s := &Store{
		path:        abs,
		log:         opts.Logger,
		lockTimeout: opts.LockTimeout,
		traceCap:    opts.TraceCap,
		traceTotal:  max(opts.TraceTotal, opts.TraceCap),
		entryCap:    opts.EntryCap,
		maxBytes:    opts.MaxBytes,
		runs:        newSet(opts.Capacity, opts.MaxBytes/2),
		subs:        map[int]func(Entry){},
	}
	s.notifyCond = sync.NewCond(&s.notifyMu)
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.syncLocked(true); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the journal file's absolute path.
func (s *Store) Path() string { return s.path }

func (s *Store) lock() (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.lockTimeout)
	defer cancel()
	unlock, err := filelock.Lock(ctx, s.path+".lock")
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return unlock, nil
}

// Put records e, replacing any entry with its ID, and returns once it is
// durably on disk. It normalizes e first (see Entry) and refuses an entry
// without ID, with an ID longer than MaxIDBytes, with an unknown state or
// kind, or with a Result that is not JSON, with an error wrapping
// ErrInvalidEntry. An entry whose line would pass Options.EntryCap is
// stored with less, and Get returns it so: its output cut in the middle
// (head and tail kept, OutputTruncated set), then without its action log,
// warnings and result, then with each text field cut to 1 KiB. Then it
// keeps only the newest Capacity runs by Start that fit in half of
// Options.MaxBytes, evicting the oldest finished ones. After storing, it
// calls the subscribers.
func (s *Store) Put(e Entry) error {
	e, err := normalize(e)
	if err != nil {
		return err
	}
	if len(e.ID) > MaxIDBytes {
		return fmt.Errorf("%w: an ID of %d bytes; at most %d", ErrInvalidEntry, len(e.ID), MaxIDBytes)
	}
	line, err := encodeEntry(e)
	if err != nil {
		return err
	}
	if e, line, err = fit(e, line, s.entryCap); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	err = s.putLocked(e, line)
	var trimmed error
	if err != nil && e.State.Terminal() && writeFailed(err) {
		// A finished run's outcome must outlive a disk too full for its
		// output: store it again with less.
		for _, t := range trims(e) {
			if line, lerr := encodeEntry(t); lerr == nil && s.putLocked(t, line) == nil {
				e, trimmed, err = t, fmt.Errorf("%w: %w", ErrTrimmed, err), nil
				break
			}
		}
	}
	if err != nil {
		s.mu.Unlock()
		return err
	}
	my := s.seq
	s.seq++
	s.mu.Unlock()
	s.notify(my, e)
	return trimmed
}

// errWrite marks a failure to write the file, as opposed to taking the
// lock or reading what others wrote: only such a failure is worth a
// smaller retry.
type errWrite struct{ err error }

func (e *errWrite) Error() string { return e.err.Error() }
func (e *errWrite) Unwrap() error { return e.err }

func writeFailed(err error) bool {
	var we *errWrite
	return errors.As(err, &we)
}

// trimKeep is how much of a run's output the first trim keeps: its tail,
// where a failure shows.
const trimKeep = 8 << 10

// trims are smaller forms of a finished run, each smaller than the one
// before, for a disk with no room for the whole.
func trims(e Entry) []Entry {
	note := "[output not stored: there was no room for it]\n"
	tail := e
	if len(e.Output) > trimKeep {
		cut := len(e.Output) - trimKeep
		for cut < len(e.Output) && !utf8.RuneStart(e.Output[cut]) {
			cut++
		}
		tail.Output, tail.OutputTruncated = "[output before this not stored: there was no room for it]\n"+e.Output[cut:], true
	}
	bare := e
	bare.Output, bare.OutputTruncated, bare.Actions = note, e.Output != "", nil
	least := bare
	least.Result, least.Permissions = nil, ""
	least.FirstError = truncateUTF8(e.FirstError, 1<<10)
	return []Entry{tail, bare, least}
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// notify calls the subscribers for the my-th stored Put, after those of
// every earlier one. It holds no Store lock while they run, so they may
// call Get and List; a Put from a subscriber would wait for its own turn.
func (s *Store) notify(my uint64, e Entry) {
	s.notifyMu.Lock()
	for s.turn != my {
		s.notifyCond.Wait()
	}
	s.notifyMu.Unlock()
	defer func() {
		s.notifyMu.Lock()
		s.turn++
		s.notifyCond.Broadcast()
		s.notifyMu.Unlock()
	}()
	s.subMu.Lock()
	subs := make([]func(Entry), 0, len(s.subs))
	for _, id := range slices.Sorted(maps.Keys(s.subs)) {
		subs = append(subs, s.subs[id])
	}
	s.subMu.Unlock()
	for _, f := range subs {
		f(clone(e))
	}
}

func (s *Store) putLocked(e Entry, line []byte) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.syncLocked(true); err != nil {
		return err
	}
	before := s.runs
	defer func() { s.dropTracesLocked(before) }()
	next := s.runs.clone()
	next.put(e, int64(len(line)))
	if s.gen == "" || s.lines+1 > 2*next.capacity || s.size+int64(len(line)) > s.maxBytes {
		err := s.rewriteLocked(next)
		if err == nil || s.gen == "" {
			return err
		}
		// The rewrite needs room for a second copy of the file; the
		// append needs room for one line. Compact another time.
	}
	if err := s.appendLocked(line); err != nil {
		return err
	}
	s.runs = next
	s.size += int64(len(line))
	s.lines++
	return nil
}

// appendLocked appends one line and syncs it. On failure it cuts the file
// back, so a half-written line never outlives the error it caused.
func (s *Store) appendLocked(line []byte) error {
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if testWriteHook != nil {
		err = testWriteHook(s.path, s.size, len(line))
	}
	if err == nil {
		_, err = f.Write(line)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Truncate(s.size)
		f.Close()
		return fmt.Errorf("history: appending run: %w", &errWrite{err})
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("history: appending run: %w", &errWrite{err})
	}
	return nil
}

// testWriteHook, when set by a test, runs before each write of n bytes at
// offset off of the file at path; an error it returns is the write's.
var testWriteHook func(path string, off int64, n int) error

// rewriteLocked replaces the file with exactly the runs in next, under a
// new generation.
func (s *Store) rewriteLocked(next *set) error {
	entries := next.sorted()
	slices.Reverse(entries) // oldest first, as if appended in order
	gen := newGeneration()
	data, err := encodeFile(gen, entries)
	if err != nil {
		return err
	}
	if testWriteHook != nil {
		err = testWriteHook(s.path, 0, len(data))
	}
	if err == nil {
		err = atomicfile.WriteFile(s.path, data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("history: rewriting: %w", &errWrite{err})
	}
	s.runs, s.gen, s.size, s.lines = next, gen, int64(len(data)), len(entries)
	return nil
}

// syncLocked brings s.runs up to date with the file: it reads only the
// lines appended since the last read when the file is the same generation,
// and the whole file otherwise. A writer (holding the file lock) also cuts
// off a torn last line, so its append starts on a line boundary, and moves
// a corrupt file aside.
func (s *Store) syncLocked(writer bool) error {
	data, incremental, err := s.readNew()
	if errors.Is(err, fs.ErrNotExist) {
		// Nothing on disk (yet, or any more): keep what we know and write
		// it all with the next Put.
		s.gen = ""
		return nil
	}
	if err != nil {
		// A file that cannot be read (a directory in its place, say) is
		// set aside like one that does not decode, as the consent store
		// does.
		return s.corrupt(writer, err, nil)
	}
	if incremental {
		recs, sizes, n, err := decodeRecords(data, s.lines+2)
		if err != nil {
			return s.corrupt(writer, err, data)
		}
		for i, e := range recs {
			s.runs.put(e, int64(sizes[i]))
		}
		s.size += int64(n)
		s.lines += len(recs)
		if writer && n < len(data) {
			return s.cutTorn(s.size)
		}
		return nil
	}
	d, err := decodeFile(data)
	if err != nil {
		return s.corrupt(writer, err, data)
	}
	if d.gen == "" { // an empty file
		s.gen = ""
		return nil
	}
	runs := newSet(s.runs.capacity, s.runs.budget)
	for i, e := range d.records {
		runs.put(e, int64(d.sizes[i]))
	}
	s.runs, s.gen, s.size, s.lines = runs, d.gen, int64(d.size), len(d.records)
	if writer && d.size < len(data) {
		return s.cutTorn(int64(d.size))
	}
	return nil
}

// readNew returns the bytes after s.size when the file is still the
// generation s.runs reflects (incremental), or else the whole file. The
// file is closed on return, so that it can be moved aside on Windows too.
func (s *Store) readNew() (data []byte, incremental bool, err error) {
	f, err := os.Open(s.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("history: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%w: %s is not a regular file (%s)", ErrCorrupt, s.path, fi.Mode().Type())
	}
	if s.gen != "" && fi.Size() >= s.size && s.sameGeneration(f) {
		data = make([]byte, fi.Size()-s.size)
		if _, err := f.ReadAt(data, s.size); err != nil {
			return nil, false, fmt.Errorf("history: %w", err)
		}
		return data, true, nil
	}
	data, err = io.ReadAll(f)
	if err != nil {
		return nil, false, fmt.Errorf("history: %w", err)
	}
	return data, false, nil
}

// sameGeneration reports whether f still has the header s.gen was read
// from. A rewrite may reuse the inode of a file replaced long ago, so the
// identity check is the generation, not the file.
func (s *Store) sameGeneration(f *os.File) bool {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	for i, c := range buf {
		if c == '\n' {
			h, err := decodeHeader(buf[:i])
			return err == nil && h.Generation == s.gen
		}
	}
	return false
}

// cutTorn drops a torn last line. Only a lock holder may do it: without the
// lock the "torn" line may be another writer's append still in progress.
func (s *Store) cutTorn(size int64) error {
	if err := os.Truncate(s.path, size); err != nil {
		return fmt.Errorf("history: dropping a torn last line: %w", err)
	}
	s.log.Info("history: dropped a torn last line left by an interrupted write", "path", s.path)
	return nil
}

// corrupt handles a file that does not decode, data being what was read
// of it. A writer keeps every entry line that still decodes (with the runs
// it knew), moves the file aside whole, so nothing is lost, and writes the
// kept runs to a new file at once. A reader leaves the file to the next
// writer, which checks again under the lock.
func (s *Store) corrupt(writer bool, cause error, data []byte) error {
	if !writer {
		return cause
	}
	aside := fmt.Sprintf("%s.corrupt-%s", s.path, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(s.path, aside); err != nil {
		return fmt.Errorf("%w, and it could not be moved aside: %v", cause, err)
	}
	salvaged := salvage(data)
	for _, e := range salvaged {
		if line, err := encodeEntry(e); err == nil {
			s.runs.put(e, int64(len(line)))
		}
	}
	s.log.Warn("history file was corrupt; moved it aside and keeping the runs still readable in it and those this process knows",
		"path", s.path, "moved_to", aside, "error", cause, "runs_salvaged", len(salvaged), "runs_kept", len(s.runs.byID))
	s.gen = ""
	if len(s.runs.byID) > 0 {
		if err := s.rewriteLocked(s.runs); err != nil {
			// The next Put writes them all again.
			s.log.Warn("history: could not write the runs kept from a corrupt file", "path", s.path, "error", err)
		}
	}
	return nil
}

// refresh picks up other processes' writes for a read. Errors only mean the
// view may be stale, so they are logged, not returned.
func (s *Store) refreshLocked() {
	if s.closed {
		return
	}
	if err := s.syncLocked(false); err != nil {
		s.log.Warn("history: could not read other processes' runs; showing the runs this process knows",
			"path", s.path, "error", err)
	}
}

// Get returns the run with the given ID.
func (s *Store) Get(id string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	e, ok := s.runs.byID[id]
	if !ok {
		return Entry{}, false
	}
	return clone(e), true
}

// List returns every run kept, newest first (by Start, then by ID).
func (s *Store) List() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked()
	out := s.runs.sorted()
	for i := range out {
		out[i] = clone(out[i])
	}
	return out
}

// Subscribe calls f with a copy of every entry this Store's Put stores,
// until cancel is called. It does not see other processes' writes.
//
// f runs synchronously on the goroutine calling Put, after the entry is on
// disk and after Put released its locks, and calls are serialised in the
// order entries were stored, across goroutines: a slow f delays every
// later Put's return. So f must not block (hand the entry to a buffered
// channel or a goroutine of your own instead), and must not call Put, which
// would wait for f's own turn to end. It may call Get, List and Close. cancel is idempotent; after it
// returns, f is not called by Puts that begin later.
func (s *Store) Subscribe(f func(Entry)) (cancel func()) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = f
	return func() {
		s.subMu.Lock()
		defer s.subMu.Unlock()
		delete(s.subs, id)
	}
}

// Close stops the Store: later Puts return ErrClosed, while Get and List
// keep serving what it knew. Close holds no resources open between calls,
// so it cannot fail; it is safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
