// Package traceview serves runs' traces (package trace) to a person
// reading why a run failed, as plain HTML.
//
//   - [New] returns an http.Handler over a [Source]: "/" lists the runs,
//     "/run/{id}" shows one run's timeline (calls with durations and
//     outcomes, navigations, console lines, dialogs, steps) and its
//     failures' screenshots and outlines, served from
//     "/run/{id}/shot/{n}", and a table of what the run touched outside
//     the browser (trace.Access: kind, what, allowed or denied, count).
//   - [FromHistory] is a Source over a history.Store.
//
// Everything a script or a page controls (names, addresses, paths,
// console lines, messages, output) is escaped twice over: display.Line makes
// control characters and bidi overrides visible as Go escapes, and
// html/template escapes the markup. Pages carry a strict
// Content-Security-Policy (no script at all, styles and images from the
// view only) and are answered only for a loopback Host, so a web page
// that rebinds a name to 127.0.0.1 cannot read them.
//
// A host mounts the handler on a loopback listener of its own; the
// handler starts no goroutines.
package traceview
