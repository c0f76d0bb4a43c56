package cdp

import (
	"strings"
	"unicode/utf8"

	"github.com/tranquil/automation/internal/textfold"
)

// indexFold is the first i, at the start of a character of s, where
// strings.EqualFold(s[i:i+len(substr)], substr) holds, or -1. A page's
// name and a script's choice can each be megabytes: comparing at each
// character took as long as their product, this takes as long as their
// sum.
func indexFold(s, substr string) int {
	if ascii(substr) {
		// A part of s as long as an ASCII substr that folds to it holds
		// no other character (those that fold to ASCII, as the Kelvin
		// sign, take more bytes than the letter), so one search of the
		// lower-cased texts finds it.
		return strings.Index(lowerASCII(s), lowerASCII(substr))
	}
	return indexFoldRunes(s, substr)
}

// indexFoldRunes is indexFold for any substr: where the case-folded
// characters of s hold those of substr, taking as many bytes. EqualFold
// reads a part of s that ends inside a character as that character's
// first bytes, each an invalid one (U+FFFD): so substr's trailing U+FFFDs
// may also be the first bytes of a character of s.
func indexFoldRunes(s, substr string) int {
	keys, starts := foldKeys(s)
	want, _ := foldKeys(substr)
	best := -1
	for tail := 0; tail < utf8.UTFMax && tail <= len(want); tail++ {
		if tail > 0 && want[len(want)-tail] != utf8.RuneError {
			break
		}
		pattern := want[:len(want)-tail]
		eachIndex(keys, pattern, func(p int) bool {
			i, end := starts[p], starts[p+len(pattern)]
			if best >= 0 && i >= best {
				return false
			}
			if end+tail-i != len(substr) {
				return true
			}
			if tail > 0 {
				// end+tail must fall inside a character of s (an invalid
				// byte is one of its own).
				q := p + len(pattern)
				if q == len(keys) || starts[q+1]-end <= tail {
					return true
				}
			}
			best = i
			return false
		})
	}
	return best
}

// foldKeys is s as characters, each as one member of its case-folding
// orbit, and where each starts (with len(s) last), read as range does.
func foldKeys(s string) (keys []rune, starts []int) {
	n := utf8.RuneCountInString(s)
	keys, starts = make([]rune, 0, n), make([]int, 0, n+1)
	for i, r := range s {
		keys, starts = append(keys, textfold.Key(r)), append(starts, i)
	}
	return keys, append(starts, len(s))
}

// eachIndex calls found with each p, in order, where text[p:] starts with
// pattern, until found returns false (Knuth–Morris–Pratt: linear in both).
func eachIndex(text, pattern []rune, found func(p int) bool) {
	if len(pattern) == 0 {
		for p := range text {
			if !found(p) {
				return
			}
		}
		return
	}
	fail := make([]int, len(pattern))
	for i, k := 1, 0; i < len(pattern); i++ {
		for k > 0 && pattern[i] != pattern[k] {
			k = fail[k-1]
		}
		if pattern[i] == pattern[k] {
			k++
		}
		fail[i] = k
	}
	for i, k := 0, 0; i < len(text); i++ {
		for k > 0 && text[i] != pattern[k] {
			k = fail[k-1]
		}
		if text[i] == pattern[k] {
			k++
		}
		if k == len(pattern) {
			if !found(i - k + 1) {
				return
			}
			k = fail[k-1]
		}
	}
}

// ascii reports whether s is all ASCII.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerASCII is s with its ASCII letters in lower case and every other
// byte as it was, as long as s.
func lowerASCII(s string) string {
	b := []byte(s)
	for k, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[k] = c + 'a' - 'A'
		}
	}
	return string(b)
}
