// Package traceview serves runs' traces (package trace) to a person
// reading why a run failed, as plain HTML.
//
//   - [New] returns an http.Handler over a [Source]: "/" lists the runs
//     with their state, length and script, filtered by "?state=failed"
//     links (on the server: the page has no script). "/run/{id}" shows
//     one run: its state, why it ended (a sentence printed once), its
//     result and output, bounded; a timeline counted from the run's start
//     ("+0.4 s"), with each call's length ("850 ms") and a bar for its
//     share of the run, its tab named by the title of the tab's first
//     page (or its host; the id on hover), the script's file and line
//     that made each call and, unless Options.NoSource, that line of the
//     script (read bounded, only from a script file inside the run's
//     script folder), grouped by the step whose span holds it, a failed
//     attempt a retry followed shown as retried; screenshots before and
//     after page actions when the trace has them ("/run/{id}/action/{n}");
//     its failures' screenshots and
//     outlines, served from "/run/{id}/shot/{n}"; and what the run
//     touched outside the browser (trace.Access), the SDK's own settings,
//     files and bridge connection folded into one line.
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
