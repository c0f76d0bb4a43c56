// Package automation is the root of a library that lets a desktop host run
// user automation scripts as sandboxed Deno subprocesses.
//
// The packages beneath it, each with one job:
//
//   - [github.com/tranquil/automation/permissions]: parse a script's
//     @permissions header and compute its deno flags and host capabilities.
//   - [github.com/tranquil/automation/consent]: remember what the user
//     approved and ask again when a declaration changes.
//   - [github.com/tranquil/automation/rpc/capnweb]: the Cap'n Web protocol,
//     over any transport.
//   - [github.com/tranquil/automation/rpc/wsconn]: the WebSocket transport
//     and its TCP tuning.
//   - [github.com/tranquil/automation/rpc]: the authenticated loopback bridge
//     scripts reach the host through.
//   - [github.com/tranquil/automation/cdp]: browsers and Electron apps over
//     the DevTools protocol.
//   - [github.com/tranquil/automation/launch]: starting, probing and
//     cleaning up the browsers and apps cdp drives.
//   - [github.com/tranquil/automation/runner]: the run manager and the
//     embedded TypeScript SDK.
//   - [github.com/tranquil/automation/history]: recent runs, crash-safe.
//   - [github.com/tranquil/automation/mirror]: one-way copies of a script's
//     results into a folder the user chose.
//   - [github.com/tranquil/automation/cdptabs]: a reference browser for the
//     runner's Tabs.
//   - [github.com/tranquil/automation/display]: text a script controls, made
//     safe to show.
//   - [github.com/tranquil/automation/hosttest]: test doubles of the host's
//     interfaces, for a host's own tests.
//
// CONTRIBUTING.md gives each package's rules; rules_test.go enforces them.
//
// This package holds no code; it exists for its documentation.
package automation
