// Package audit records a run's accesses outside the browser into its
// trace, from deno's own report of its permission checks, for package
// runner.
//
//   - [Start] makes a run's report pipe under a directory of the host's
//     and starts the reader that records each report into a
//     trace.Recorder; [Pipe.Env] points the child's environment at it,
//     [Pipe.Stop] drains and removes it once the child has exited.
//   - [RulesFromArgs] reads back what a deno command line's permission
//     flags allow, and [Rules.Judge] decides one check by them.
//   - [Sweep] removes the pipes of hosts that died mid-run.
//
// Deno reports every permission check it makes, allowed or denied, as one
// JSON line to the file DENO_AUDIT_PERMISSIONS names (deno's
// runtime/permissions/lib.rs write_audit: {"v","datetime","permission",
// "value"}, written before the check decides, unbuffered, write errors
// ignored). The runner points it at a FIFO in a directory of its own under
// DataDir (audit_unix.go), which no grant can reach: permissions.Flags
// refuses any read= or write= that reaches, contains or lies in DataDir,
// and DENO_* variables cannot be granted, so the script can neither read
// the variable nor write the pipe. A host goroutine reads the lines and
// adds them to the run's trace.Recorder, which keeps one entry per kind,
// value and outcome with a count: a script looping on a denied read costs
// a count, not memory or disk.
//
// Deno's report does not say whether a check was allowed. Rules decides it
// from the very flags the run's deno got (permissions.Flags computes them;
// they alone enforce), with deno 2.9's matching rules. What deno checks
// that the flags cannot tell, and what deno does not report:
//   - a relative path is resolved against the run's starting directory
//     (the script's); one used after Deno.chdir is judged from there too;
//   - a name allowed by --allow-net that deno then refused because it
//     resolved into a denied range shows as allowed (deno reports the
//     name's check, not the address's);
//   - a path that leads through an existing symlink into /proc, /dev or
//     /sys is judged by the path as written;
//   - deno 2.9.6 reports no run checks: commands run are not recorded.
//
// Goroutines: each Pipe has one reader, owned by whoever started it; it
// ends in Stop, which waits for it (at most auditDrain, 2 s, for a
// process that still holds a write end).
package audit
