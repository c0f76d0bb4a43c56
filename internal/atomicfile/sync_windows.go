//go:build windows

package atomicfile

// syncDir is a no-op: Windows cannot open a directory for syncing, and
// MoveFileEx, which os.Rename uses, is durable once it returns.
func syncDir(string) error { return nil }
