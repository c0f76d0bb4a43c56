// Package ospath is path/filepath for the paths of the system the rules run
// for. Built for a real system it is filepath itself, and Windows is
// runtime.GOOS. Built for js/wasm (the testing kit's rules,
// internal/ruleswasm) it reads paths as Windows or Unix ones, as the
// program sets for each call (UseWindows, by the script's path), Windows
// ones with Go's own Windows path code (windows.go). So permissions and
// pathguard, which call it instead of filepath, judge a script in C:\ in
// the kit as the app on Windows does.
package ospath
