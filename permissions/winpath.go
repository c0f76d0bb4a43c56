package permissions

import (
	"fmt"
	"strings"
)

// windowsPathProblem says why v, a read= or write= value, cannot be
// granted on Windows, or "" when it can. It reads v as Windows does,
// whatever system it runs on, so its rules are testable anywhere:
//
//   - C:foo is relative to drive C's current folder, which the host cannot
//     know, and \foo is on whatever drive is current; both would resolve
//     to something other than the user approved.
//   - \\?\ and \\.\ paths skip Windows' path normalisation or name
//     devices; the plain form of the same file is the one deno and the
//     guards compare.
//   - A colon past the drive names an alternate data stream (file:stream),
//     a second file hidden inside the first.
//   - CON, NUL, COM1 and the other device names are devices in every
//     folder, with or without an extension (con.txt is the console too).
func windowsPathProblem(key, v string) string {
	switch {
	case v == "":
		return ""
	case strings.HasPrefix(v, `\\?\`) || strings.HasPrefix(v, `\\.\`) || strings.HasPrefix(v, `//?/`) || strings.HasPrefix(v, `//./`):
		return fmt.Sprintf(`%s=%s is a device or \\?\ path; write the plain path, like C:\data\file.txt`, key, v)
	case len(v) >= 2 && v[1] == ':' && isLetter(v[0]) && (len(v) == 2 || v[2] != '\\' && v[2] != '/'):
		return fmt.Sprintf(`%s=%s is relative to the current folder of drive %s, which differs from process to process; write %s\… in full`, key, v, v[:2], v[:2])
	case isSep(v[0]) && (len(v) == 1 || !isSep(v[1])): // \\server\share is refused as a network path
		return fmt.Sprintf(`%s=%s has no drive, so it would mean a different file on each drive; write the drive too, like C:%s`, key, v, v)
	}
	rest := v
	if len(v) >= 2 && v[1] == ':' && isLetter(v[0]) {
		rest = v[2:]
	}
	if strings.Contains(rest, ":") {
		return fmt.Sprintf("%s=%s names an alternate data stream (a colon after the drive); grant the file itself", key, v)
	}
	for _, c := range strings.FieldsFunc(rest, func(r rune) bool { return r == '\\' || r == '/' }) {
		if isDeviceName(c) {
			return fmt.Sprintf("%s=%s names the Windows device %s, which exists in every folder; choose another name", key, v, c)
		}
	}
	return ""
}

func isSep(c byte) bool { return c == '\\' || c == '/' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isDeviceName reports whether Windows opens the path component c as a
// device: a reserved name, alone or followed by an extension, ignoring
// case and the trailing spaces and dots Windows drops.
func isDeviceName(c string) bool {
	base, _, _ := strings.Cut(c, ".")
	base = strings.TrimRight(base, " ")
	switch strings.ToUpper(base) {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$":
		return true
	}
	if len(base) == 4 || len(base) == 5 {
		u := strings.ToUpper(base)
		if p := u[:3]; p == "COM" || p == "LPT" {
			d := base[3:]
			return d >= "0" && d <= "9" && len(d) == 1 || d == "¹" || d == "²" || d == "³"
		}
	}
	return false
}
