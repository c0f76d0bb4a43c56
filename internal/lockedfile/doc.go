// Package lockedfile keeps one value in a file shared by several writers,
// in one process or many.
//
//   - [File.Load] reads the value; a missing file is the empty value.
//   - [File.Update] changes it under a cross-process lock: read fresh,
//     change, replace atomically (temporary file, fsync, rename, fsync of
//     the directory), mode 0600.
//
// A file that cannot be decoded or read is corrupt: it is moved aside as
// <path>.corrupt-<UTC timestamp>, reported through the logger, and treated
// as empty. Nothing in it is lost, and nothing in it is trusted.
package lockedfile
