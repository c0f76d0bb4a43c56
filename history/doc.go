// Package history records the runs of automation scripts: the newest N
// (default 100) within a cap in bytes (default 128 MiB), persisted
// crash-safely at a path the host chooses.
//
//   - [Open] opens the history file and returns a [Store].
//   - [Store.Put] records a run, new or updated, durably; [Store.Get] and
//     [Store.List] read runs back, newest first.
//   - [Store.Subscribe] calls a function after every Put, for live views.
//   - [NewOutput] returns an [Output], a writer that keeps the head and
//     the tail of a run's output under a byte cap.
//   - [Store.PutTrace] keeps a run's trace (bytes the caller encoded, such
//     as package trace's) beside its entry; [Store.Trace] reads it back.
//
// # Storage
//
// The file is an append-only journal: a header line, then one line per
// Put, each "<CRC-32C in hex> <JSON>". Put appends its line and fsyncs it
// before returning, so a run Put reported stored is never lost, whatever
// kills the process afterwards. A process killed mid-append leaves at most a
// torn last line, which the next reader ignores and the next writer cuts
// off. Once the journal would hold more than twice the capacity in lines,
// or pass Options.MaxBytes, Put rewrites it whole (temporary file, fsync,
// rename, fsync of the directory), keeping only the runs still held.
//
// Why a journal and not rewriting the whole file on every Put: a run is
// Put several times (queued, running, finished), and with 100 runs holding
// large outputs a whole-file rewrite writes megabytes per Put. Appending
// writes one entry; BenchmarkPut measures both (see bench/history).
//
// A file that does not decode — a bad header, a line failing its checksum
// or its JSON, or unterminated bytes that are not a torn line — is corrupt,
// and so is one that cannot be read (a directory in its place, say). It is
// moved aside whole to path.corrupt-<UTC timestamp> and reported through
// the Store's logger; every entry line that still decodes is kept, with
// the runs the Store already knew, and written to a new file at once. One
// bad line hides no other run.
//
// A full disk does not lose a finished run: when its entry cannot be
// written, Put stores it with less (the output cut to its tail, then
// without output and action log, then without result) and returns an
// error wrapping [ErrTrimmed]; its state, reason, exit and times are
// stored. A rewrite that finds no room for the second copy it needs
// appends instead.
//
// # Size on disk
//
// Every part has a cap in bytes. An entry's line is at most
// Options.EntryCap (default 2 MiB): Put cuts the output of a larger one
// in the middle, keeping its head and tail. The runs kept take at most
// half of Options.MaxBytes (default 128 MiB), the oldest finished ones
// evicted first even below Capacity, and the journal never passes
// MaxBytes. A trace is at most Options.TraceCap (16 MiB) and all of them
// together Options.TraceTotal (256 MiB). So at the defaults the history
// of 100 runs takes at most 128 MiB of journal and 256 MiB of traces on
// disk, 384 MiB in all, plus for a moment the new copy a rewrite writes
// (at most 64 MiB). Of 100 runs that each kept the most output the
// runner keeps (1 MiB), the newest 60 or so are held. A full disk that
// leaves no room for a rewrite is the one case the journal grows past
// MaxBytes: Put appends instead (see below).
//
// # Traces
//
// A run's trace is a file of its own in the folder path.traces, named by a
// hash of the run's ID, written atomically: a header line (a checksum,
// the length and the run's ID), then the trace. It is removed when its run
// is evicted. One trace is at most Options.TraceCap bytes; when all of
// them pass Options.TraceTotal, the oldest runs' traces are removed first.
// A trace file that is not what PutTrace wrote is refused with a
// [*TraceCorruptError]; the run itself is unaffected.
//
// # Sharing
//
// Several Stores, in one process or many, may share one file. Writers take
// an advisory lock on path.lock and first read what others appended, so no
// write is lost or interleaved, and each Store's Get and List see the
// others' runs. Subscribers see only their own Store's Puts.
//
// # Entries
//
// Put normalizes an entry so that what Get returns now and after a restart
// is identical: times become UTC, strings valid UTF-8, empty slices nil,
// and the empty Kind KindScript. A Kind other than KindScript (KindWorkflow,
// or a host's own lower-case word) is stored like any other. Result is
// kept byte for byte, unless the entry is cut to fit Options.EntryCap.
//
// Capacity and MaxBytes evict only finished runs, oldest Start first. A run left live
// (preparing, queued, starting, running) by a host that died stays live, and is never
// evicted, until it is Put again: a runner should, when it starts, Put such
// runs again in a terminal state.
//
// A Store starts no goroutines and holds no file open between calls.
package history
