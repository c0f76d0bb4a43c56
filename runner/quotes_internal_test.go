package runner

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goQuoted is the rule withoutQuotes follows, as a regular expression: the
// oracle its tests hold it to.
var goQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

func TestWithoutQuotes(t *testing.T) {
	for in, want := range map[string]string{
		``:                                      ``,
		`no quotes`:                             `no quotes`,
		`unknown key "timout" (it takes "a")`:   `unknown key "…" (it takes "…")`,
		`"a\"b" and "c\\" d`:                    `"…" and "…" d`,
		`open "quote`:                           `open "quote`,
		"bad \"a\\\nb\" then \"x\"":             "bad \"a\\\nb\"…\"x\"",
		`"é\"" ok`:                              `"…" ok`,
		"\"\xff\\\xfe\"":                        `"…"`,
		`"\"\"\"\"` + "\\\n" + `"c"`:            `"\"\"\"\"` + "\\\n" + `"…"`,
		`a"b"c"d`:                               `a"…"c"d`,
		`"trailing backslash\`:                  `"trailing backslash\`,
		`sites= "127.0.0.1:1" and "x"` + "\n\"": `sites= "…" and "…"` + "\n\"",
	} {
		assert.Equal(t, goQuoted.ReplaceAllString(in, `"…"`), want, "the oracle, for %q", in)
		assert.Equal(t, want, withoutQuotes(in), "%q", in)
	}
}

// A quote that never closes, with escaped quotes inside, is read once, not
// once per quote (a value a script chose can be all of that).
func TestWithoutQuotesIsLinear(t *testing.T) {
	in := `"` + strings.Repeat(`\"`, 1<<20) + "\\\n"
	start := time.Now()
	out := withoutQuotes(in)
	took := time.Since(start)
	require.Equal(t, goQuoted.ReplaceAllString(in, `"…"`), out)
	assert.Less(t, took, time.Second, "2 MiB took %v", took)
}

func FuzzWithoutQuotes(f *testing.F) {
	for _, s := range []string{`a "b" c`, `"\"`, "\"\\\n\"", `"\\"`, "\"\xff\"", `""""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, got := goQuoted.ReplaceAllString(s, `"…"`), withoutQuotes(s); got != want {
			t.Fatalf("withoutQuotes(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkWithoutQuotes(b *testing.B) {
	msg := `tab.fill: argument 2 must be a string, not "` + strings.Repeat("x", 256<<10) + `" (it takes "a")`
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			withoutQuotes(msg)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for b.Loop() {
			goQuoted.ReplaceAllString(msg, `"…"`)
		}
	})
}
