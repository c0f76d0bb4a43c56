// Package consent remembers what the user approved each script to do and
// asks again when a script's declaration changes.
//
//   - [OpenStore] opens the approvals file; [Store.List] and [Store.Revoke]
//     let users see and withdraw approvals, and [Store.OnRevoke] lets the
//     runner stop live runs of a revoked script.
//   - [NewGate] and [Gate.Authorize] decide whether a run may start,
//     asking the host's [Prompter] when needed.
//
// # Keys and storage
//
// Approvals are keyed by the script's absolute path with symlinks resolved
// ([ScriptKey]), and hold the canonical header the user approved and when.
// Any change to the canonical header (a new grant, a removed one, a
// different resolved path or timeout) asks again, with the diff.
//
// The file is JSON, mode 0600, replaced atomically (temporary file, fsync,
// rename, fsync of the directory). Writers take a lock file beside it and
// re-read before changing one entry, so several Stores, in one process or
// many, never lose each other's approvals. A temporary file left by a crash
// is ignored. A corrupt or unreadable file is moved aside with a timestamp,
// reported through slog, and treated as empty: every script is asked about
// again, and nothing is ever approved by accident.
package consent
