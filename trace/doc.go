// Package trace records what a run did, in its browser tabs and outside
// them, bounded in size, and encodes it for keeping with the run's
// history entry.
//
//   - [NewRecorder] returns a [Recorder]: the runner tells it each host
//     call ([Recorder.Call]), each access outside the browser
//     ([Recorder.Access]), navigation, console line, dialog, step and,
//     for a failed call, what the page showed ([Recorder.Failure]).
//   - [Recorder.Trace] returns the [Trace] so far; [Encode] and [Decode]
//     turn it into bytes and back.
//
// A trace is for the person who wrote the script, reading why a run
// failed; it is shown by a host's trace view. It never holds a value the
// script typed into a page or a prompt's answer: a call is its method,
// its target described, its tab and page address (without query or
// fragment), its times and its outcome. Texts the page controls (console
// lines, dialog messages, error messages) are cut to a few hundred bytes.
// Accesses ([Recorder.Access]) are the permission checks the run's deno
// process made outside the browser (files, hosts, environment names,
// system calls), one entry per kind, value and outcome with a count; an
// environment variable appears by name only.
// A failure's screenshot is pixels: it shows the page as it was, the
// fields' contents included (a password field shows its dots), so a host
// shows traces only to the user whose runs they are.
//
// # Bounds
//
// Every list has a cap ([Limits]); past it a Recorder keeps the first half
// and the newest half and counts the rest ([Dropped]), so a run making a
// hundred thousand calls records a few thousand. Accesses keep at most
// Limits.Accesses distinct entries, however many checks repeat them. Screenshots are kept only
// for the first few failures and only under a byte cap.
//
// # Encoding
//
// An encoded trace is a version line, then the trace as gzip-compressed
// JSON. Decode refuses anything else, including values a Recorder never
// makes, with a [*CorruptError]; it never holds more than [MaxDecoded]
// bytes of JSON, whatever the input claims.
package trace
