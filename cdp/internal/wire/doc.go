// Package wire is the byte-level framing of the DevTools protocol that
// package cdp multiplexes sessions over: reading a frame's session and
// reply id without decoding it, writing a call's frame, and splitting the
// debugging pipe's NUL-terminated stream with a bounded reader.
//
// It is pure: no connection, no browser, no goroutine. Its tests and
// fuzzers run without Chromium.
package wire
