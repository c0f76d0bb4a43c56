package testenv

import (
	"testing"

	"golang.org/x/sys/windows"
)

// ShortPath returns the existing path p with each component in its 8.3
// short form (C:\PROGRA~1 for C:\Program Files), or fails tb. A guard that
// compares paths must see both forms as one file.
func ShortPath(tb testing.TB, p string) string {
	tb.Helper()
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		tb.Fatal(err)
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetShortPathName(u, &buf[0], uint32(len(buf)))
	if err != nil {
		tb.Fatalf("testenv: short name of %s: %v", p, err)
	}
	return windows.UTF16ToString(buf[:n])
}
