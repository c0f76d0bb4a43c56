package mirror

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tranquil/automation/internal/pathguard"
)

// ErrRefused reports a destination the guard will not write to. Match it
// with errors.Is; [*RefusedError] says why.
var ErrRefused = errors.New("mirror: destination refused")

// RefusedError is a destination that overlaps a protected directory: the
// script's directory, the workspace, or a write= grant.
type RefusedError struct {
	// Dest is the destination as declared; Real is where it resolves.
	Dest, Real string
	// Protected is the directory it overlaps.
	Protected string
	// Inside is true when the destination lies inside Protected, false
	// when it contains it.
	Inside bool
}

func (e *RefusedError) Error() string {
	where := fmt.Sprintf("%s contains %s", e.Dest, e.Protected)
	switch {
	case e.Dest == e.Protected || e.Real == e.Protected:
		where = fmt.Sprintf("%s is %s itself", e.Dest, e.Protected)
	case e.Inside:
		where = fmt.Sprintf("%s is inside %s", e.Dest, e.Protected)
	}
	if e.Real != e.Dest {
		where += fmt.Sprintf(" (it resolves to %s)", e.Real)
	}
	return "mirror: destination refused: " + where + "; copying there would feed the mirror its own output"
}

func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// checkDestination is the mirror's own guard, a sibling of the read= and
// write= checks in permissions rather than an extension of them. It
// resolves dest twice, lexically and then through every symlink on its
// longest existing prefix (pathguard.Resolve), and refuses it when either
// form contains, equals or lies inside any protected directory in either
// of its forms. Both directions are one loop: a destination inside a
// write root is copied into itself at the next sync, and one that holds
// the script's folder holds the write roots too. It returns the real
// destination, which the sync then treats as the root every written path
// must stay inside.
//
// The check is a snapshot (time of check, time of use): a symlink swapped
// into the destination's path after it ran can redirect a write. Each
// sync checks again and resolves every target file before writing, which
// narrows the window to one file; it cannot close it without
// descriptor-relative writes (openat with O_NOFOLLOW at every component),
// which the standard library does not offer portably. The mirror runs
// with the user's privileges and writes only where the user already can,
// so the caveat is about surprise, not escalation.
func checkDestination(dest string, protected []string) (real string, err error) {
	lex, real, err := pathguard.Resolve(dest)
	if err != nil {
		return "", fmt.Errorf("mirror: resolving the destination %s: %w", dest, err)
	}
	for _, p := range protected {
		if p == "" {
			continue
		}
		forms := []string{filepath.Clean(p)}
		if plex, preal, err := pathguard.Resolve(p); err == nil {
			forms = append(forms, plex, preal)
		}
		for _, d := range []string{lex, real} {
			for _, pf := range forms {
				switch {
				case pathguard.Contains(pf, d):
					return "", &RefusedError{Dest: dest, Real: real, Protected: p, Inside: true}
				case pathguard.Contains(d, pf):
					return "", &RefusedError{Dest: dest, Real: real, Protected: p}
				}
			}
		}
	}
	return real, nil
}
