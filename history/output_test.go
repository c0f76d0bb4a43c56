package history

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var markerRE = regexp.MustCompile(`\n… (\d+) bytes omitted …\n`)

func TestOutputUnderCapIsVerbatim(t *testing.T) {
	o := NewOutput(16)
	fmt.Fprint(o, "hello\n")
	fmt.Fprint(o, "world\n")
	assert.Equal(t, "hello\nworld\n", o.String())
	assert.False(t, o.Truncated())
	fmt.Fprint(o, "abcd") // exactly the cap
	assert.Equal(t, "hello\nworld\nabcd", o.String())
	assert.False(t, o.Truncated())
	assert.Equal(t, int64(16), o.Written())
}

func TestOutputKeepsHeadAndTail(t *testing.T) {
	o := NewOutput(10)
	for i := range 10 {
		fmt.Fprintf(o, "%d\n", i) // "0\n1\n…9\n": 20 bytes
	}
	assert.True(t, o.Truncated())
	// Head "0\n1\n2", tail "\n8\n9\n": cuts fall mid-line, the marker stays on its own line.
	assert.Equal(t, "0\n1\n2\n… 10 bytes omitted …\n\n8\n9\n", o.String())
}

func TestOutputHugeSingleLines(t *testing.T) {
	o := NewOutput(1 << 10)
	head := strings.Repeat("H", 300)
	big := head + strings.Repeat("m", 10<<20) + strings.Repeat("T", 700)
	n, err := o.Write([]byte(big))
	require.NoError(t, err)
	assert.Equal(t, len(big), n, "Write reports every byte taken")
	s := o.String()
	m := markerRE.FindStringSubmatchIndex(s)
	require.NotNil(t, m)
	assert.Equal(t, head+strings.Repeat("m", 512-300), s[:m[0]])
	assert.Equal(t, strings.Repeat("T", 512), s[m[1]:])
	omitted, _ := strconv.Atoi(s[m[2]:m[3]])
	assert.Equal(t, len(big)-1024, omitted)

	// A second huge line replaces the whole tail.
	o.Write(bytes.Repeat([]byte("Z"), 5000))
	s = o.String()
	assert.True(t, strings.HasSuffix(s, "\n"+strings.Repeat("Z", 512)))
	assert.True(t, strings.HasPrefix(s, head))
	assert.LessOrEqual(t, len(s), 1024+len("\n… 10490000 bytes omitted …\n"))
}

func TestOutputRingWraps(t *testing.T) {
	o := NewOutput(8) // head 4, tail 4
	for _, p := range []string{"ab", "cd", "ef", "g", "hij", "k"} {
		o.Write([]byte(p))
	}
	assert.Equal(t, "abcd\n… 3 bytes omitted …\nhijk", o.String())
}

func TestOutputNeverSplitsUTF8(t *testing.T) {
	in := "aaé€€€€€🎉"
	o := NewOutput(10) // head 5 ends inside the first €, tail 5 starts inside the last
	o.Write([]byte(in))
	s := o.String()
	assert.True(t, utf8.ValidString(s), "%q", s)
	m := markerRE.FindStringSubmatch(s)
	require.NotNil(t, m)
	assert.True(t, strings.HasPrefix(s, "aaé\n…"), "%q", s)
	assert.True(t, strings.HasSuffix(s, "…\n🎉"), "%q", s)
	omitted, _ := strconv.Atoi(m[1])
	assert.Equal(t, len(in)-len("aaé")-len("🎉"), omitted, "cut bytes counted as omitted")

	// Invalid UTF-8 in the output itself is kept as written.
	o = NewOutput(4)
	o.Write([]byte("\xff\xfe\xfd\xfc\xfb"))
	assert.Equal(t, "\xff\xfe\n… 1 bytes omitted …\n\xfc\xfb", o.String())
}

func TestOutputZeroCapUsesDefault(t *testing.T) {
	o := NewOutput(0)
	o.Write(bytes.Repeat([]byte("x"), DefaultOutputCap))
	assert.False(t, o.Truncated())
	o.Write([]byte("y"))
	assert.True(t, o.Truncated())
	o1 := NewOutput(1) // head 0, tail 1
	o1.Write([]byte("abc"))
	assert.Equal(t, "\n… 2 bytes omitted …\nc", o1.String())
}

func TestOutputConcurrentWriters(t *testing.T) {
	const writers, lines = 8, 2000
	o := NewOutput(64 << 10)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(o, "writer %d line %05d %s\n", w, i, strings.Repeat("=", i%50))
			}
		})
		wg.Go(func() { // readers race with writers
			for range 50 {
				_ = o.String()
				_ = o.Truncated()
			}
		})
	}
	wg.Wait()
	s := o.String()
	require.True(t, o.Truncated())
	m := markerRE.FindStringSubmatchIndex(s)
	require.NotNil(t, m)
	omitted, _ := strconv.ParseInt(s[m[2]:m[3]], 10, 64)
	assert.Equal(t, o.Written(), int64(len(s)-(m[1]-m[0]))+omitted, "kept plus omitted is everything written")
	lineRE := regexp.MustCompile(`^writer [0-7] line \d{5} =*$`)
	check := func(part string, dropFirst, dropLast bool) {
		ls := strings.Split(part, "\n")
		if dropFirst {
			ls = ls[1:]
		}
		if dropLast {
			ls = ls[:len(ls)-1]
		}
		for _, l := range ls {
			assert.Regexp(t, lineRE, l, "each Write stays whole")
		}
	}
	check(s[:m[0]], false, true) // the head's last line is cut
	check(s[m[1]:], true, true)  // the tail's first line is cut; it ends in "\n"
}
