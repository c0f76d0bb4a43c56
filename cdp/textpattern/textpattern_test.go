package textpattern

import (
	"context"
	"errors"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// slowPattern is 100 bytes that compile to 9,003 instructions, within
// MaxInstructions: over text of letters alone it keeps some 9,000
// threads alive for each character and never matches, so a megabyte of
// it takes the better part of a minute.
var slowPattern = strings.Repeat(`[a-z]{1000}`, 9) + "!"

// allocated reports the bytes f allocates, and f's duration.
func allocated(f func()) (uint64, time.Duration) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, took
}

// Patterns past a limit are refused with limit_exceeded, at once and
// without building what they describe.
func TestPatternLimits(t *testing.T) {
	for _, c := range []struct {
		name, source string
		limit        int
	}{
		{"2 MB source", strings.Repeat("(a|b)", 2<<20/5), MaxBytes},
		{"2 KiB source", strings.Repeat("x", 2<<10), MaxBytes},
		{"1 KiB over a byte", strings.Repeat("é", MaxBytes/2) + "x", MaxBytes},
		// 11,000 instructions from 121 bytes.
		{"program", strings.Repeat(`[a-z]{1000}`, 11), MaxInstructions},
		// 113,000 instructions from 1,017 bytes.
		{"large program", strings.Repeat(`\pL{1000}`, 113), MaxInstructions},
		{"unbounded repeats", strings.Repeat(`[a-z]{1000,}`, 10), MaxInstructions},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			bytes, took := allocated(func() { _, err = Compile(c.source, "i") })
			t.Logf("%d bytes of source: refused in %v, %d bytes allocated: %v", len(c.source), took, bytes, err)
			var le *LimitError
			require.ErrorAs(t, err, &le)
			require.ErrorIs(t, err, errcode.LimitExceeded)
			assert.Equal(t, errcode.LimitExceeded, errcode.Of(err))
			assert.Equal(t, c.limit, le.Limit)
			// What parsing a 1 KiB source costs (Unicode classes are
			// tables), never the program.
			assert.Less(t, bytes, uint64(2<<20), "refused before it was built")
			if c.limit == MaxInstructions {
				built, _ := allocated(func() { _, _ = regexp.Compile(c.source) })
				t.Logf("regexp.Compile allocates %d bytes for it", built)
				assert.Less(t, 4*bytes, built)
			}
			assert.Less(t, len(err.Error()), MaxBytes+300, "the message does not repeat a source past the limit")
			// What it cost is held by the bytes allocated above; the time
			// it took is only logged, as a busy machine stretches it.
		})
	}

	// At the limits: accepted.
	for _, source := range []string{strings.Repeat("x", MaxBytes), slowPattern, strings.Repeat("é", MaxBytes/2)} {
		p, err := Compile(source, "")
		require.NoError(t, err, source)
		require.LessOrEqual(t, p.insts, MaxInstructions)
	}
	// Go's parser refuses nested repeats past 1,000 copies itself.
	_, err := Compile(`(?:[a-z]{1000}){9}`, "")
	require.ErrorIs(t, err, errcode.Invalid)
	// A RegExp has at most 8 flags; more are not repeated back.
	_, err = Compile("a", strings.Repeat("i", 1<<20))
	require.ErrorIs(t, err, errcode.Invalid)
	require.Less(t, len(err.Error()), 200)
}

// programSize never counts fewer instructions than the compiler makes,
// and not many more.
func TestProgramSizeBoundsTheProgram(t *testing.T) {
	for _, source := range []string{
		``, `a`, `abc`, `(a)`, `a*`, `(a*)*`, `a+?`, `a?`, `a|b|c`, `(?:a|)`, `x{0}`, `x{1}`, `x{2,5}`,
		`x{3,}`, `(?:ab){0,}`, `[a-z]{1000}`, `(?i)saved\s+at \d+:\d+`, `^(?:\w+\.)+\w+$`, `\bword\b`,
		`(?s).*`, `(?m)^$`, `\pL{10}\PN{2,3}`, `(?:(?:a{10}){10}){10}`, `[^\n]+|\z`, slowPattern,
		`(?:a?){50}`, `(a|b)*c{2,}d{0,3}`, `()`, `(?:)`, `[\x{1F600}-\x{1F64F}]{5,}`,
	} {
		re, err := syntax.Parse(source, syntax.Perl)
		require.NoError(t, err, source)
		est := programSize(re)
		prog, err := syntax.Compile(re.Simplify())
		require.NoError(t, err)
		real := len(prog.Inst)
		assert.GreaterOrEqual(t, est, real, "%s: counted %d, compiled %d", source, est, real)
		assert.LessOrEqual(t, est, 2*real+8, "%s: counted %d, compiled %d", source, est, real)
	}
}

// A match that would run for long ends when its context does, with the
// context's error; one that ends sooner is MatchString's answer.
func TestPatternMatchEndsWithItsContext(t *testing.T) {
	p, err := Compile(slowPattern, "")
	require.NoError(t, err)
	text := strings.Repeat("a", MaxMatchBytes)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	held, err := p.Match(ctx, text)
	took := time.Since(start)
	t.Logf("a match with a 300 ms timeout returned after %v", took)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, held)
	require.Less(t, took, 800*time.Millisecond)

	ctx, cancel = context.WithCancel(context.Background())
	stop := time.AfterFunc(100*time.Millisecond, cancel)
	defer stop.Stop()
	start = time.Now()
	_, err = p.Match(ctx, text)
	took = time.Since(start)
	t.Logf("a match cancelled after 100 ms returned after %v", took)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, took, 600*time.Millisecond)

	// A match the text settles early is no slower for the limits.
	held, err = p.Match(context.Background(), strings.Repeat("a", 9000)+"!")
	require.NoError(t, err)
	require.True(t, held)
}

// Matching sees the first MaxMatchBytes of a text, cut between
// characters.
func TestPatternMatchesTheFirstMegabyte(t *testing.T) {
	ctx := context.Background()
	end, err := Compile(`b`, "")
	require.NoError(t, err)
	held, err := end.Match(ctx, strings.Repeat("a", MaxMatchBytes)+"b")
	require.NoError(t, err)
	require.False(t, held, "b lies past the first MiB")
	held, err = end.Match(ctx, strings.Repeat("a", MaxMatchBytes-1)+"b")
	require.NoError(t, err)
	require.True(t, held)

	last, err := Compile(`é$`, "")
	require.NoError(t, err)
	held, err = last.Match(ctx, strings.Repeat("a", MaxMatchBytes-3)+"éé")
	require.NoError(t, err)
	require.True(t, held, "the cut falls before the second é, not inside it")
	require.Equal(t, MaxMatchBytes-1, len(cutUTF8(strings.Repeat("a", MaxMatchBytes-3)+"éé", MaxMatchBytes)))
}

// FuzzCompile compiles any source and flags a script could send:
// a pattern is refused or within its limits, its size is never counted
// short, and matching through the context's reader agrees with
// MatchString.
func FuzzCompile(f *testing.F) {
	f.Add(`^Saved$`, "i", "Saved")
	f.Add(`\u{1F600}+`, "u", "😀😀")
	f.Add(`(?:ab{3,}|c?){2,4}`, "gs", "abbbc")
	f.Add(`[a-z]{1000}`, "", "abc")
	f.Add(`(a|b)\b$`, "m", "xa\nb")
	f.Add(`é.`, "s", "é\n\xff")
	f.Fuzz(func(t *testing.T, source, flags, text string) {
		p, err := Compile(source, flags)
		if err != nil {
			var ie *InvalidError
			var le *LimitError
			if !errors.As(err, &ie) && !errors.As(err, &le) {
				t.Fatalf("Compile(%q, %q): untyped error %v", source, flags, err)
			}
			return
		}
		if len(source) > MaxBytes || p.insts > MaxInstructions {
			t.Fatalf("/%s/%s accepted with %d instructions", source, flags, p.insts)
		}
		re, err := syntax.Parse(p.re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		if len(prog.Inst) > p.insts {
			t.Fatalf("/%s/%s: %d instructions counted, %d compiled", source, flags, p.insts, len(prog.Inst))
		}
		if len(text)*p.insts > matchAtOnce {
			return // slow by design: TestPatternMatchEndsWithItsContext
		}
		want := p.re.MatchString(text)
		got := p.re.MatchReader(&ctxRunes{s: text, every: 1})
		if got != want {
			t.Fatalf("/%s/%s on %q: read %v, MatchString %v", source, flags, text, got, want)
		}
		if held, err := p.Match(context.Background(), text); err != nil || held != want {
			t.Fatalf("/%s/%s on %q: match %v %v, MatchString %v", source, flags, text, held, err, want)
		}
	})
}

func TestCompile(t *testing.T) {
	for _, c := range []struct {
		source, flags, text string
		match               bool
	}{
		{`^Saved$`, "", "Saved", true},
		{`saved`, "i", "SAVED", true},
		{`saved`, "", "SAVED", false},
		{`^b$`, "m", "a\nb", true},
		{`a.b`, "s", "a\nb", true},
		{`a.b`, "", "a\nb", false},
		{`\u2026$`, "u", "Saving…", true},
		{`\u{1F600}`, "u", "hi 😀", true},
		{`\d+ items?`, "g", "3 items", true},
		{`a\/b`, "", "a/b", true},
	} {
		p, err := Compile(c.source, c.flags)
		require.NoError(t, err, c.source)
		require.Equal(t, c.match, p.re.MatchString(c.text), "/%s/%s on %q", c.source, c.flags, c.text)
	}
	for _, c := range [][2]string{{`(?<=a)b`, ""}, {`(a)\1`, ""}, {`a`, "v"}, {`a`, "x"}} {
		_, err := Compile(c[0], c[1])
		var ie *InvalidError
		require.ErrorAs(t, err, &ie, c[0])
		require.ErrorIs(t, err, errcode.Invalid)
		require.Contains(t, err.Error(), "/"+c[0]+"/"+c[1])
	}
}

// BenchmarkPatternMatch compares, call by call, matching a short text
// through Match (the limits and the context) with MatchString alone.
func BenchmarkPatternMatch(b *testing.B) {
	p, err := Compile(`^saved at \d+:\d+$`, "i")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	text := "Saved at 10:00"
	var plain, bounded time.Duration
	timed := func(into *time.Duration, f func()) {
		t0 := time.Now()
		for range 100 {
			f()
		}
		*into += time.Since(t0)
	}
	byString := func() { p.re.MatchString(text) }
	byMatch := func() {
		if _, err := p.Match(ctx, text); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; b.Loop(); i++ {
		// Who goes first alternates.
		if i%2 == 0 {
			timed(&plain, byString)
			timed(&bounded, byMatch)
		} else {
			timed(&bounded, byMatch)
			timed(&plain, byString)
		}
	}
	b.ReportMetric(float64(plain.Nanoseconds())/float64(100*b.N), "MatchString-ns")
	b.ReportMetric(float64(bounded.Nanoseconds())/float64(100*b.N), "match-ns")
}
