// Package filelock serialises writers of a shared file across processes.
//
//   - [Lock] takes an exclusive advisory lock on a lock file, waiting for
//     other holders, and returns the function that releases it.
//
// It uses flock on Unix and LockFileEx on Windows. The lock is advisory: it
// protects cooperating writers (two host processes sharing one state file),
// not against other programs.
package filelock
