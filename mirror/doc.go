// Package mirror copies a script's results into a folder the user chose:
// one way, never deleting, behind a guard of its own, with visible state.
//
//   - [OpenBeside] (or [OpenStore]) opens the declarations, stored with the
//     consent approvals.
//   - [Store.Set], [Store.Remove], [Store.Get] and [Store.List] let the user,
//     through the host, declare, withdraw and see mirrors; [Store.Status]
//     gives the mirror that applies to a script and its [State].
//   - [Store.Sync] copies a script's write= outputs; the runner calls it when
//     a run succeeds, and hosts through runner.Manager.Sync.
//
// # Declarations
//
// A mirror names one destination directory and is keyed by a script's real
// path ([ScopeScript]) or by a workspace directory ([ScopeWorkspace]),
// which covers every script inside it that has no mirror of its own. Only
// the user declares one, through a host call; a script has no API for it,
// and there is no global destination and no environment variable. The file
// (mode 0600) is replaced atomically under a lock file, like the consent
// store; a corrupt one is moved aside with a timestamp, and no mirror runs
// until declared again.
//
// # What a sync copies
//
// The regular files under the write= grants of the run, laid out relative to
// the script's directory (or the workspace), when their size or
// modification time differs from the destination's. It never deletes or
// unlinks in the destination, and replaces a file only through a temporary
// file and a rename. See [Store.Sync].
//
// # The guard
//
// The destination is checked twice, lexically and after resolving symlinks,
// at Set and again at every sync. It may neither contain nor lie inside the
// script's directory, the workspace, or any write root ([ErrRefused],
// [*RefusedError]). During a sync, a symlink in the source that leaves its
// write root, or one along a destination path that leaves the destination,
// is skipped and reported ([Skip]), and the rest is still copied. The
// checks are a snapshot: a symlink swapped in between the check and the
// write can redirect that one write (see checkDestination in guard.go).
//
// # State and triggers
//
// Each mirror keeps when it last synced, what triggered it, how many files
// it copied, what it skipped and the last error. [State.Outcome] tells
// "never synced" from "synced, nothing to copy" from "copied N" and from
// "failed". A sync happens only when called: at the end of a succeeded run
// or on an explicit request. The package starts no goroutines and watches
// no files: a watcher would be unbounded work set off by anything,
// the mirror's own writes included.
package mirror
