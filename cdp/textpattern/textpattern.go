package textpattern

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tranquil/automation/display"
	"github.com/tranquil/automation/errcode"
)

// A script's regular expressions are compiled and matched in the host's
// process, so what one may cost is bounded before it is spent: the
// source's size before anything is parsed, the compiled program's size
// before it is built, and the matching by the text it reads and by the
// call's context.

const (
	// MaxBytes bounds a pattern's source, in bytes of UTF-8. It is
	// checked before the pattern is parsed, since parsing and compiling
	// cost memory in proportion to the source.
	MaxBytes = 1 << 10
	// MaxInstructions bounds the program a pattern compiles to.
	// Matching may take a step per instruction for each character of text,
	// and a short source can compile large ({n} copies what it repeats:
	// 11 bytes of [a-z]{1000} are 1,000 instructions), so this bounds how
	// much slower than a plain one a pattern can match. The size is
	// counted from the parsed pattern before it is compiled.
	MaxInstructions = 10_000
	// MaxMatchBytes bounds the text a pattern is matched against: a longer
	// text is matched on its first MaxMatchBytes, cut between characters,
	// so a pattern anchored at the end ($) sees that cut, not the text's
	// end. The text compared without a pattern, and the text an error
	// quotes, are not cut.
	MaxMatchBytes = 1 << 20
)

// maxFlags is how many flags a RegExp can carry: d, g, i, m, s, u, v and
// y, each at most once.
const maxFlags = 8

// patternExcerpt is how many characters of a source too long to take an
// error quotes: enough to tell which pattern it was.
const patternExcerpt = 40

// Pattern is a regular expression as a script writes one: a JavaScript
// RegExp's source and flags, matched by Go's regexp, which has the same
// syntax for what scripts mostly use (classes, groups, alternation,
// anchors, counts) but no lookaround or backreferences.
type Pattern struct {
	re    *regexp.Regexp
	insts int    // instructions of the compiled program, or a few more (programSize)
	shown string // as the script wrote it: /source/flags
}

// Compile compiles a JavaScript RegExp's source and flags. The
// flags i, m and s keep their meaning; g, y, d and u change nothing for a
// match, so they are accepted and ignored. A pattern Go's regexp cannot
// match, or another flag, is an *InvalidError; a source longer than
// [MaxBytes], or one that compiles to more than
// [MaxInstructions], is a *LimitError.
func Compile(source, flags string) (*Pattern, error) {
	if len(source) > MaxBytes {
		return nil, &LimitError{Pattern: "/" + display.Shorten(source, patternExcerpt) + "/", Limit: MaxBytes, Reason: fmt.Sprintf("its source is %d bytes; a pattern may have at most %d", len(source), MaxBytes)}
	}
	if len(flags) > maxFlags {
		return nil, &InvalidError{Pattern: "/" + source + "/" + display.Shorten(flags, maxFlags), Reason: fmt.Sprintf("a RegExp has at most %d flags", maxFlags)}
	}
	shown := "/" + source + "/" + flags
	var inline string
	for _, f := range flags {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(inline, f) {
				inline += string(f)
			}
		case 'g', 'y', 'd', 'u':
		default:
			return nil, &InvalidError{Pattern: shown, Reason: fmt.Sprintf("the flag %q is not supported; use i, m, s, g, y, d or u", f)}
		}
	}
	expr := jsEscapes(source)
	if inline != "" {
		expr = "(?" + inline + ")" + expr
	}
	// regexp.Compile parses as syntax.Perl does; parsing first lets the
	// program's size be known before anything copies what {n} repeats.
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, invalidPattern(shown, err)
	}
	insts := programSize(parsed)
	if insts > MaxInstructions {
		return nil, &LimitError{Pattern: shown, Limit: MaxInstructions, Reason: fmt.Sprintf("it compiles to more than %d instructions (its repeats copy what they repeat); repeat less, or match less at once", MaxInstructions)}
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, invalidPattern(shown, err)
	}
	return &Pattern{re: re, insts: insts, shown: shown}, nil
}

// Glob compiles a URL glob as Playwright's waitForURL reads one:
// ** matches any run of characters, * any run without a slash, and every
// other character itself; the whole address must match. A glob without
// a star is an exact address. A glob longer than [MaxBytes] is a
// *LimitError, as a RegExp's source is.
func Glob(glob string) (*Pattern, error) {
	if len(glob) > MaxBytes {
		return nil, &LimitError{Pattern: display.Shorten(glob, patternExcerpt), Limit: MaxBytes, Reason: fmt.Sprintf("it is %d bytes; a URL glob may have at most %d", len(glob), MaxBytes)}
	}
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(glob); {
		switch {
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(`.*`)
			i += 2
		case glob[i] == '*':
			b.WriteString(`[^/]*`)
			i++
		default:
			j := i + 1
			for j < len(glob) && glob[j] != '*' {
				j++
			}
			b.WriteString(regexp.QuoteMeta(glob[i:j]))
			i = j
		}
	}
	b.WriteString(`$`)
	parsed, err := syntax.Parse(b.String(), syntax.Perl)
	if err != nil {
		return nil, invalidPattern(glob, err)
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, invalidPattern(glob, err)
	}
	return &Pattern{re: re, insts: programSize(parsed), shown: fmt.Sprintf("%q", glob)}, nil
}

// invalidPattern words a parse error of the pattern shown.
func invalidPattern(shown string, err error) error {
	reason := err.Error()
	var se *syntax.Error
	if errors.As(err, &se) {
		reason = fmt.Sprintf("%s at %s", se.Code, strconv.Quote(se.Expr))
	}
	return &InvalidError{Pattern: shown, Reason: reason + "; lookaround and backreferences are not supported"}
}

// programSize is at least the number of instructions syntax.Compile makes
// of re once simplified, and at most MaxInstructions+1: it follows
// the compiler (an instruction per character, class or assertion, two per
// capture, one per alternative or loop) and counts a repeat as the copies
// Simplify makes of it, without making them.
func programSize(re *syntax.Regexp) int {
	return min(2+subSize(re), MaxInstructions+1) // + the fail and match instructions
}

// subSize is the instructions of re, at most MaxInstructions+1.
func subSize(re *syntax.Regexp) int {
	const over = MaxInstructions + 1
	var n int
	switch re.Op {
	case syntax.OpLiteral:
		n = max(1, len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		n = 2 + subSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		n = 1 + subSize(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		n = len(re.Sub) // the alternatives' branches, or a concat's nop
		for _, sub := range re.Sub {
			if n += subSize(sub); n > over {
				break
			}
		}
	case syntax.OpRepeat:
		sub := subSize(re.Sub[0])
		switch {
		case re.Max == 0:
			n = 1
		case re.Max < 0:
			n = max(re.Min, 1)*sub + 2 // x{n,} is n-1 copies and x+; x{0,} is x*
		default:
			n = re.Min*sub + (re.Max-re.Min)*(sub+1) // x{n,m} is n copies and m-n nested x?
		}
	default: // a class, any character, an assertion, no match, empty
		n = 1
	}
	return min(n, over)
}

// Match reports whether p matches s, cut to MaxMatchBytes, or fails with
// ctx's error when ctx ends first: a match that could take long reads s
// through a reader that ends it when ctx does.
func (p *Pattern) Match(ctx context.Context, s string) (bool, error) {
	s = cutUTF8(s, MaxMatchBytes)
	if len(s)*p.insts <= matchAtOnce {
		return p.re.MatchString(s), nil
	}
	r := &ctxRunes{done: ctx.Done(), s: s, every: max(1, matchCheckWork/p.insts)}
	held := p.re.MatchReader(r)
	if r.stopped {
		return false, ctx.Err()
	}
	return held, nil
}

// Matching costs at most about a step per instruction of the program for
// each character of text; a step takes a few nanoseconds.
const (
	// matchAtOnce is the most steps a match may take without looking at
	// its context: a few milliseconds. Up to it MatchString runs, with
	// its fast paths (a literal prefix is searched for, a short text
	// backtracked); past it the match reads through a ctxRunes.
	matchAtOnce = 1 << 22
	// matchCheckWork is how many steps go by between two looks at the
	// context while a long match reads: about a millisecond.
	matchCheckWork = 1 << 18
)

// ctxRunes reads s for a match until done is closed: then it reports the
// end of the text, so the match ends, and stopped says why.
type ctxRunes struct {
	done    <-chan struct{}
	s       string
	at      int
	every   int // runes between two looks at done
	left    int // runes until the next look
	stopped bool
}

func (r *ctxRunes) ReadRune() (rune, int, error) {
	if r.left--; r.left < 0 {
		r.left = r.every
		select {
		case <-r.done:
			r.stopped = true
		default:
		}
	}
	if r.stopped || r.at >= len(r.s) {
		return 0, 0, io.EOF
	}
	c, size := rune(r.s[r.at]), 1
	if c >= utf8.RuneSelf {
		c, size = utf8.DecodeRuneInString(r.s[r.at:])
	}
	r.at += size
	return c, size, nil
}

// cutUTF8 cuts s to at most n bytes, between characters.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// jsEscapes rewrites JavaScript's \uXXXX and \u{X…} escapes in a pattern
// as \x{…}, the form Go's regexp reads.
func jsEscapes(src string) string {
	if !strings.Contains(src, `\u`) {
		return src
	}
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		if src[i] != '\\' || i+1 >= len(src) {
			b.WriteByte(src[i])
			continue
		}
		if src[i+1] == 'u' {
			rest := src[i+2:]
			if j := strings.IndexByte(rest, '}'); strings.HasPrefix(rest, "{") && j > 1 && isHex(rest[1:j]) {
				b.WriteString(`\x{` + rest[1:j] + "}")
				i += 2 + j
				continue
			}
			if len(rest) >= 4 && isHex(rest[:4]) {
				b.WriteString(`\x{` + rest[:4] + "}")
				i += 5
				continue
			}
		}
		b.WriteString(src[i : i+2])
		i++
	}
	return b.String()
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return s != ""
}

// String is the pattern as the script wrote it.
func (p *Pattern) String() string { return p.shown }

// InvalidError is a pattern [Compile] cannot use. Its code
// is invalid.
type InvalidError struct {
	Pattern string
	Reason  string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("the pattern %s cannot be matched: %s", e.Pattern, e.Reason)
}

// ErrorCode is invalid.
func (e *InvalidError) ErrorCode() errcode.Code { return errcode.Invalid }

// Is matches errcode.Invalid.
func (e *InvalidError) Is(target error) bool { return target == error(errcode.Invalid) }

// LimitError is a pattern past one of the limits
// [Compile] holds it to. Its code is limit_exceeded.
type LimitError struct {
	// Pattern is the pattern as the script wrote it, its source cut when
	// that is what is too long.
	Pattern string
	// Limit is the limit it met: [MaxBytes] or
	// [MaxInstructions].
	Limit int
	// Reason says how the pattern went past Limit.
	Reason string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the pattern %s is too large: %s", e.Pattern, e.Reason)
}

// ErrorCode is limit_exceeded.
func (e *LimitError) ErrorCode() errcode.Code { return errcode.LimitExceeded }

// Is matches errcode.LimitExceeded.
func (e *LimitError) Is(target error) bool {
	return target == error(errcode.LimitExceeded)
}
