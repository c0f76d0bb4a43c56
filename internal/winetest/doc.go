// Package winetest holds what the library's tests need to run on Windows
// under Wine, where `make test-windows` runs them, and the harness that
// does it.
//
//   - [Wine] reports a Wine run, asked of the system itself (Wine's ntdll
//     exports wine_get_version).
//   - [RequireSymlinks] skips a test that makes symbolic links where Wine
//     cannot make them; [NoJobMemoryLimit] is the reason a test of the job
//     object's memory cap gives when Wine let the memory through.
//
// The harness is two scripts beside this file. tree makes, once, a Debian
// trixie tree with Wine 10 under .tools/wine10 (Debian bookworm's Wine 8
// starts deno.exe, but V8 dies reserving memory there). run cross-compiles
// the test binaries, fetches deno.exe from npm (@deno/win32-x64, the
// Makefile's DENO_VERSION) into .tools/deno-win, fills deno.exe's default
// module cache with the SDK's npm packages, and runs every package that
// needs no browser in that tree, in a mount and network namespace of its
// own (only loopback is up, so no test reaches anything else). It prints a
// table per package and every test left out by name, with the reason:
// Chromium tests (runner's are listed in runner-browser-tests), and the
// few Wine cannot run. The browser half that needs no browser runs there
// too: internal/browserproc hands a fake browser (the test binary) its
// debugging pipes as inherited Windows handles and drives it over them.
package winetest
