//go:build windows

package pathguard

import (
	"strings"

	"golang.org/x/sys/windows"
)

// samePath compares paths as Windows does: without regard to case.
func samePath(a, b string) bool { return strings.EqualFold(a, b) }

// longName returns the name the existing path p (whose last component is
// name) has on disk: its long form when name is an 8.3 short name such as
// PROGRA~1, in the case it was created with. Without it, C:\Users\me\MYSCRI~1
// and C:\Users\me\My Scripts would be two folders to every comparison. It
// returns name when the directory cannot be read.
func longName(p, name string) string {
	if strings.ContainsAny(name, "*?") {
		return name // a pattern to FindFirstFile, never a name
	}
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return name
	}
	var d windows.Win32finddata
	h, err := windows.FindFirstFile(u, &d)
	if err != nil {
		return name
	}
	windows.FindClose(h)
	return windows.UTF16ToString(d.FileName[:])
}
