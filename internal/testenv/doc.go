// Package testenv locates the real tools the project's tests drive and
// checks that tests leave nothing behind.
//
//   - [Deno] returns the deno binary: $TRANQUIL_DENO, then the repository's
//     .tools/node_modules/.bin/deno, then PATH.
//   - [Chromium] returns the browser binary: $TRANQUIL_CHROMIUM, then
//     .tools, then PATH (chromium, chromium-browser, google-chrome).
//   - [ChromiumWithPort] starts a browser with a DevTools port, as a user would.
//   - [CheckGoroutines] fails a test whose goroutines outlive it.
//   - [PeakOf] samples a runtime metric, such as the heap, for a test that
//     bounds what the process may hold.
//   - ShortPath (Windows only) names an existing path by its 8.3 short form.
//
// A missing tool fails the test with the exact command that installs it. It
// never skips: a suite that silently skips its real-Deno tests proves nothing.
package testenv
