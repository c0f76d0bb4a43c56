// Package automation is the root of a library that lets a desktop host run
// user automation scripts as sandboxed Deno subprocesses.
//
// The packages beneath it, each with one job:
//
//   - [github.com/tranquil/automation/permissions]: parse a script's
//     @permissions header and compute its deno flags and host capabilities.
//   - [github.com/tranquil/automation/consent]: remember what the user
//     approved and ask again when a declaration changes.
//
// This package holds no code; it exists for its documentation.
package automation
