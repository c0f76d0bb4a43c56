package pathguard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameBytes is the longest name [SafeName] returns, in bytes of UTF-8:
// below the 255 bytes (or UTF-16 units) most file systems take, with room
// for the suffix a copy may get.
const MaxNameBytes = 200

// SafeName turns untrusted text, such as the file name a web page
// suggests for a download, into one file name that stays where it is
// joined on every system: only its last path element on either
// separator is kept, control and format characters go, characters
// Windows refuses in names become '_', leading dots and trailing dots
// and spaces go (no hidden file, no "..", no name Windows would trim to
// another), a Windows device name (CON, nul.txt, COM1, LPT¹) gets a
// leading '_', invalid UTF-8 becomes '_', and the name is cut to
// MaxNameBytes keeping its extension. What remains empty is fallback.
// A name is safe exactly when SafeName leaves it as it is.
func SafeName(s, fallback string) string {
	s = strings.ToValidUTF8(s, "_")
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r): // C0, DEL and C1; format characters
			return -1
		case strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		}
		return r
	}, s)
	s = strings.TrimLeft(s, ". ")
	s = strings.TrimRight(s, ". ")
	if s == "" {
		return fallback
	}
	if isDeviceName(s) {
		s = "_" + s
	}
	return cutName(s)
}

// isDeviceName reports a name Windows opens as a device whatever its
// folder or extension: CON, PRN, AUX, NUL, COM0-9 and LPT0-9 (with the
// superscript digits ¹²³ too), in any case, before the first dot, with
// trailing spaces ignored.
func isDeviceName(s string) bool {
	stem, _, _ := strings.Cut(s, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) < 4 || (stem[:3] != "COM" && stem[:3] != "LPT") {
		return false
	}
	switch stem[3:] {
	case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
		return true
	}
	return false
}

// cutName shortens s to MaxNameBytes on a rune boundary, keeping an
// extension of up to 16 bytes.
func cutName(s string) string {
	if len(s) <= MaxNameBytes {
		return s
	}
	ext := ""
	if i := strings.LastIndexByte(s, '.'); i > 0 && len(s)-i <= 16 {
		s, ext = s[:i], s[i:]
	}
	n := MaxNameBytes - len(ext)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRight(s[:n], ". ") + ext
}
