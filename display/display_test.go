package display

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestShorten(t *testing.T) {
	assert.Equal(t, "short", Shorten("short", 5))
	assert.Equal(t, "shor…", Shorten("shorter", 4))
	assert.Equal(t, "日本…", Shorten("日本語", 2), "cut between characters, not bytes")
	assert.Equal(t, "a\uFFFD…", Shorten("a\xffbc", 2), "what it keeps is UTF-8")
	assert.Equal(t, "…", Shorten("abc", 0))
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode, 日本語, emoji 👩‍💻": "plain text, ünïcode, 日本語, emoji 👩‍💻",
		"/home/me/scripts/x.ts":               "/home/me/scripts/x.ts",
		`C:\Users\me\x.ts`:                    `C:\Users\me\x.ts`,
		"":                                    "",
		// ANSI: colour, cursor up and erase line, clear screen, OSC title.
		"\x1b[31mred\x1b[0m":            `\x1b[31mred\x1b[0m`,
		"ok\x1b[1A\x1b[2KApproved":      `ok\x1b[1A\x1b[2KApproved`,
		"\x1b]0;title\x07":              `\x1b]0;title\x07`,
		"two\nlines\r\ttab":             `two\nlines\r\ttab`,
		"nul\x00del\x7f":                `nul\x00del\x7f`,
		"c1 csi \u009b31m nel \u0085":   `c1 csi \u009b31m nel \u0085`,
		"bidi \u202eexe.txt\u202c":      `bidi \u202eexe.txt\u202c`,
		"isolates \u2066x\u2069 \u200f": `isolates \u2066x\u2069 \u200f`,
		"zero\u200bwidth \ufeff":        `zero\u200bwidth \ufeff`,
		"sep \u2028 \u2029":             `sep \u2028 \u2029`,
		"tag \U000e0041 pua \ue000":     `tag \U000e0041 pua \ue000`,
		"bad \xff\xc3 utf8":             `bad \xff\xc3 utf8`,
		"8-bit csi \x9b31m":             `8-bit csi \x9b31m`,
	} {
		got := Line(in)
		assert.Equal(t, want, got, "Line(%q)", in)
		assert.True(t, utf8.ValidString(got))
	}
}

func TestText(t *testing.T) {
	assert.Equal(t, "line one\n\tline two", Text("line one\n\tline two"))
	assert.Equal(t, `one\r\x1b[2Kforged`+"\ntwo", Text("one\r\x1b[2Kforged\ntwo"))
	assert.Equal(t, `\u202eabc`, Text("\u202eabc"))
}

// Whatever goes in, what comes out holds nothing a terminal acts on.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"a\x1b[2Jb", "\u202e", "\xff", "ok\n", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q", s)
			}
			for _, r := range out {
				if !visible(r, utf8.RuneLen(r), true) {
					t.Fatalf("%q came out of %q", r, s)
				}
			}
		}
		for _, r := range Line(s) {
			if r == '\n' || r == '\t' {
				t.Fatalf("Line kept %q of %q", r, s)
			}
		}
	})
}
