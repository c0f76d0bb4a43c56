// Package leakcheck fails a test binary whose tests leave goroutines
// running.
//
// Entry points:
//
//   - [Main] runs a package's tests from its TestMain and fails the run
//     when goroutines started while they ran are still running after a
//     grace period; [Wrap] does the same around a TestMain's own setup
//     and teardown.
//   - [Stacks] lists the goroutines running now, for a gate of its own.
//   - [Snapshot] and [Set.Since] find such goroutines around any piece of
//     code, for a test that checks one case.
//
// A goroutine counts as left behind when it did not exist before the
// tests started and still exists once they have all returned, after the
// grace period that lets closed connections and cancelled calls wind
// down. Goroutines the runtime itself starts (the garbage collector's,
// the finalizer's) never appear in the dumps this package reads.
package leakcheck
