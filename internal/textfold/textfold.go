package textfold

import (
	"unicode"
	"unicode/utf8"
)

// Key is the least rune r folds to: two runes fold together when their
// keys are equal.
func Key(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	key := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		key = min(key, f)
	}
	return key
}

// HasPrefix reports whether s starts with lower (ASCII, lower case) under
// simple case folding, as (?i:lower) matches it (the "s" of websocket is
// also U+017F, a "k" also the Kelvin sign), and how many bytes of s that
// prefix takes.
func HasPrefix(s, lower string) (int, bool) {
	n := 0
	for i := 0; i < len(lower); i++ {
		r, size := utf8.DecodeRuneInString(s[n:])
		if size == 0 || Key(r) != Key(rune(lower[i])) {
			return 0, false
		}
		n += size
	}
	return n, true
}
