//go:build darwin

package pathguard

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// pcCaseSensitive is pathconf's _PC_CASE_SENSITIVE (sys/unistd.h), which
// x/sys/unix does not name.
const pcCaseSensitive = 11

// samePath compares paths as the volume holding them does. APFS and HFS+
// ignore case unless formatted otherwise, so there /Users/Me/Data and
// /users/me/data are one folder; a case-sensitive volume keeps them two.
// The volume is asked (pathconf) only when the paths differ in case alone.
// Unicode normalization, which APFS also ignores, is not compared.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	return strings.EqualFold(a, b) && !caseSensitive(a)
}

// caseSensitive asks the volume of p's longest existing prefix whether it
// tells names apart by case; when none can be asked it answers yes, and
// paths compare byte for byte as on other Unix systems.
func caseSensitive(p string) bool {
	for d := p; ; d = filepath.Dir(d) {
		v, err := unix.Pathconf(d, pcCaseSensitive)
		if err == nil {
			return v != 0
		}
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) || d == filepath.Dir(d) {
			return true
		}
	}
}

// longName returns name: macOS keeps no short names, and a name in another
// case is judged by samePath.
func longName(_, name string) string { return name }
