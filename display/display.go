package display

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s safe to show on one line: every character that is not
// visible text is written as an escape. That is the C0 controls (line
// breaks and tabs included), DEL, the C1 controls (8-bit CSI among them),
// bidi overrides, isolates and marks, other invisible format characters,
// line and paragraph separators, private-use and unassigned code points,
// and bytes that are not UTF-8. Text without any of them comes back as is.
func Line(s string) string { return escape(s, false) }

// Shorten cuts s to at most n characters, never inside one, and marks a
// cut with "…"; bytes that are not UTF-8 in what it keeps become U+FFFD.
// It reads no further than it keeps: s may be a page's whole text.
func Shorten(s string, n int) string {
	for i := range s {
		if n == 0 {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		n--
	}
	return s
}

// Text is Line for text that may span lines: it keeps line feeds and
// tabs, and escapes everything else Line does, carriage returns included
// (a bare one moves the cursor back over what was written).
func Text(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !visible(r, n, multiline) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if visible(r, n, multiline) {
			b.WriteString(s[i : i+n])
		} else {
			writeEscape(&b, r, n, s[i])
		}
		i += n
	}
	return b.String()
}

// visible reports whether a rune is shown as itself. ZWJ and ZWNJ stay:
// they join emoji and letters of several scripts, and cannot reorder or
// hide text.
func visible(r rune, n int, multiline bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return false
	case r == '\n' || r == '\t':
		return multiline
	case r == '\u200c' || r == '\u200d':
		return true
	}
	return unicode.IsGraphic(r)
}

func writeEscape(b *strings.Builder, r rune, n int, first byte) {
	switch {
	case r == utf8.RuneError && n == 1:
		b.WriteString(`\x`)
		writeHex(b, uint32(first), 2)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x80:
		b.WriteString(`\x`)
		writeHex(b, uint32(r), 2)
	case r <= 0xffff:
		b.WriteString(`\u`)
		writeHex(b, uint32(r), 4)
	default:
		b.WriteString(`\U`)
		writeHex(b, uint32(r), 8)
	}
}

func writeHex(b *strings.Builder, v uint32, width int) {
	h := strconv.FormatUint(uint64(v), 16)
	for range width - len(h) {
		b.WriteByte('0')
	}
	b.WriteString(h)
}
