// Package textpattern is the regular expressions scripts write
// (JavaScript RegExp source and flags) as package cdp compiles and matches
// them in the host's process: bounded in size before anything is built,
// and in matching by the text read and the call's context.
//
// It is pure (no browser, no I/O), so that its tests and fuzzer run
// without Chromium; cdp's Pattern, CompilePattern and pattern errors are
// its types under their cdp names.
package textpattern
