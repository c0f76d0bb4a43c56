package pathguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tranquil/automation/internal/ospath"
)

// maxLinks bounds symlink expansions, like the kernel's ELOOP limit.
const maxLinks = 255

// ErrLinkLoop reports a chain of symlinks that does not end.
var ErrLinkLoop = errors.New("pathguard: too many levels of symbolic links")

// Resolve returns the lexical form of p (absolute and cleaned; p must be
// absolute) and its real form: every symlink on the longest existing prefix
// is followed, and the components that do not exist yet are appended
// unchanged. On Windows each existing component of the real form is the
// name on disk: its long form, not an 8.3 short name, in its own case.
func Resolve(p string) (lexical, real string, err error) {
	if !ospath.IsAbs(p) {
		return "", "", fmt.Errorf("pathguard: %q is not absolute", p)
	}
	lexical = ospath.Clean(p)
	real, err = realpath(lexical, 0)
	if err != nil {
		return "", "", err
	}
	return lexical, real, nil
}

func realpath(p string, links int) (string, error) {
	vol := ospath.VolumeName(p)
	rest := strings.TrimLeft(p[len(vol):], ospath.Separator())
	cur := vol + ospath.Separator()
	if rest == "" {
		return cur, nil
	}
	comps := strings.Split(rest, ospath.Separator())
	for i, c := range comps {
		next := ospath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return ospath.Join(append([]string{next}, comps[i+1:]...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("pathguard: %w", err)
		}
		if !maybeLink(fi) {
			cur = ospath.Join(cur, longName(next, c))
			continue
		}
		if links >= maxLinks {
			return "", fmt.Errorf("%w: %s", ErrLinkLoop, p)
		}
		target, err := os.Readlink(next)
		if err != nil && fi.Mode()&fs.ModeSymlink == 0 {
			// A reparse point that is no link, such as a cloud folder.
			cur = next
			continue
		}
		if err != nil {
			return "", fmt.Errorf("pathguard: %w", err)
		}
		if !ospath.IsAbs(target) {
			// cur has no symlinks left in it, so a lexical ".." from it is
			// the physical parent.
			target = ospath.Join(cur, target)
		}
		return realpath(ospath.Join(append([]string{target}, comps[i+1:]...)...), links+1)
	}
	return cur, nil
}

// maybeLink reports a symlink, or on Windows a directory reparse point:
// since Go 1.23 a junction (mount point) is reported as an irregular
// directory rather than a symlink, yet Windows, and so deno, follows it
// like one.
func maybeLink(fi fs.FileInfo) bool {
	m := fi.Mode()
	return m&fs.ModeSymlink != 0 || ospath.Windows() && m&fs.ModeIrregular != 0 && m.IsDir()
}

// Contains reports whether dir is p itself or an ancestor of p. Both must be
// clean absolute paths; the comparison is by whole components, so /a/b does
// not contain /a/bc. It compares names as the file system does: on Windows
// without regard to case (C:\Data and c:\DATA\x name the same folder and a
// file in it), on macOS likewise where the volume ignores case, as APFS
// does unless formatted otherwise.
func Contains(dir, p string) bool {
	if samePath(dir, p) {
		return true
	}
	if !strings.HasSuffix(dir, ospath.Separator()) {
		dir += ospath.Separator()
	}
	return len(p) >= len(dir) && samePath(p[:len(dir)], dir)
}
