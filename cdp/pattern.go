package cdp

import "github.com/tranquil/automation/cdp/textpattern"

// A script's regular expressions are package textpattern's, which
// bounds what one may cost before it is spent; these are its names as
// cdp's callers know them.

const (
	// MaxPatternBytes bounds a pattern's source, in bytes of UTF-8 (see
	// [textpattern.MaxBytes]).
	MaxPatternBytes = textpattern.MaxBytes
	// MaxPatternInstructions bounds the program a pattern compiles to
	// (see [textpattern.MaxInstructions]).
	MaxPatternInstructions = textpattern.MaxInstructions
	// MaxMatchBytes bounds the text a pattern is matched against (see
	// [textpattern.MaxMatchBytes]).
	MaxMatchBytes = textpattern.MaxMatchBytes
)

// Pattern is a regular expression as a script writes one: a JavaScript
// RegExp's source and flags (see [textpattern.Pattern]).
type Pattern = textpattern.Pattern

// InvalidPatternError is a pattern [CompilePattern] cannot use. Its code
// is invalid.
type InvalidPatternError = textpattern.InvalidError

// PatternLimitError is a pattern past one of the limits [CompilePattern]
// holds it to. Its code is limit_exceeded.
type PatternLimitError = textpattern.LimitError

// CompilePattern compiles a JavaScript RegExp's source and flags. The
// flags i, m and s keep their meaning; g, y, d and u change nothing for a
// match, so they are accepted and ignored. A pattern Go's regexp cannot
// match, or another flag, is an *InvalidPatternError; a source longer than
// [MaxPatternBytes], or one that compiles to more than
// [MaxPatternInstructions], is a *PatternLimitError.
func CompilePattern(source, flags string) (*Pattern, error) {
	return textpattern.Compile(source, flags)
}
