// Package consent remembers what the user approved each script to do and
// asks again when a script's declaration changes.
//
//   - [OpenStore] opens the approvals file; [Store.List] and [Store.Revoke]
//     let users see and withdraw approvals, and [Store.OnRevoke] lets the
//     runner stop live runs of a revoked script, whichever Store or
//     process revoked it: a Store with subscribers watches its file (see
//     [StoreOptions.WatchInterval]).
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
//
// # Signed approvals
//
// Every stored approval carries an HMAC-SHA256 over the script's key, the
// header and the time, so an entry written into the file by anything else
// (a script that found a way to write there, another program running as the
// same user) approves nothing. The key is [StoreOptions.Key] when the host
// supplies one, ideally from the OS keychain; otherwise it lives in
// [StoreOptions.KeyFile], by default consent.key beside consent.json, made
// once from crypto/rand with mode 0600 and read when the store opens. Keep
// that file, like the store, where no script's grant reaches: the runner
// refuses every grant that reaches any of [Store.Protected], directly or
// through a link.
//
// An entry that fails verification (no signature, a wrong one, one moved
// from another script, a widened header, a key that changed) counts as
// absent: it is not in [Store.List], [Store.Get] reports it as an error
// wrapping [ErrUnverified], the user is asked again with
// [Request.Unverified] set, and the store logs it once. It never makes the
// file corrupt, and the other entries stand. Rejected entries are dropped
// at the next write. A key file that holds no key, or (on Unix) has a
// second hard link, is moved aside and replaced, so every script asks
// again.
//
// Stores written before approvals were signed (version 1) migrate by
// asking again: none of their approvals counts, because an unsigned entry
// is exactly what a forger would write. Signing them on first open would
// turn a planted version 1 file into real approvals.
package consent
