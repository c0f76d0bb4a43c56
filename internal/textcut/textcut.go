package textcut

import (
	"strconv"
	"unicode/utf8"
)

// markerMax is the longest marker Cut appends: "… [" (5 bytes), up to 20
// digits, " bytes cut]" (11).
const markerMax = 36

// Cut returns s when it is at most max bytes long, else a prefix of s and
// the marker "… [N bytes cut]", max bytes at most together, the prefix
// never ending inside a character. A max too small for the marker keeps
// no prefix; the marker is then all there is.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	keep := max - markerMax - 4
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + "… [" + strconv.Itoa(len(s)-keep) + " bytes cut]"
}
