// Package proc starts and stops a run's deno process, and everything that
// process starts, for package runner.
//
//   - [Start] starts a process as a [Spec] says, in a group of its own (a
//     process group on Unix, a job object on Windows) under the memory
//     limit the system can enforce ([MemoryEnforced]), and returns the
//     [Child]: [Child.Exited], [Child.Terminate], [Child.Kill] and
//     [Child.Exit]. A [*StartError] means the process was not started; an
//     [ErrMemoryLimit] that the limit could not be applied, and it was
//     killed.
//   - [Supervise] watches a Child to its end and stops it in steps when
//     the run's [Stops] say so: the protocol cancel (through the run's
//     [Script]), the grace, SIGTERM to the group, then SIGKILL.
//
// Goroutines: Start starts one per Child, which waits for the process and
// kills what is left of its group; it ends once the process has exited and
// its output is drained, at most Spec.KillGrace after a Terminate or Kill.
// Supervise starts one for the protocol cancel, bounded by Stops.Grace,
// and waits for it before it returns.
package proc
