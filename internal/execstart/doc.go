// Package execstart starts a program that may have been written a moment
// ago. Its entry point is [Start].
//
// On Unix, exec refuses a program that some process still holds open for
// writing (ETXTBSY). A program just written by this process (a test's fake
// app, an app just unpacked or installed) can be held so by a fork
// elsewhere in the process, between its fork and its exec, for a few
// milliseconds; failing the start then would look like a missing or broken
// program. Start tries again instead, for up to about a second.
package execstart
