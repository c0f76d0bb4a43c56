package trace_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/trace"
)

// A run that makes 100,000 calls keeps the first and the newest ones, says
// how many it dropped, and encodes to less than a megabyte.
func TestRecorderCapsCalls(t *testing.T) {
	r := trace.NewRecorder("run-1", trace.Limits{})
	start := time.Now()
	const n = 100_000
	for i := range n {
		seq := r.Call(trace.Call{Method: "tab.fill", Target: fmt.Sprintf(`{label: "Field %d"}`, i), Tab: "tab-1",
			Page: "https://example.test/form?token=secret#frag", Start: start, Duration: time.Millisecond})
		require.Equal(t, i+1, seq)
	}
	tr := r.Trace()
	require.Len(t, tr.Calls, trace.DefaultCalls)
	require.Equal(t, n-trace.DefaultCalls, tr.Dropped.Calls)
	require.Equal(t, n-trace.DefaultCalls, tr.Dropped.Total())
	require.Equal(t, 1, tr.Calls[0].Seq)
	require.Equal(t, trace.DefaultCalls/2, tr.Calls[trace.DefaultCalls/2-1].Seq)
	require.Equal(t, n-trace.DefaultCalls/2+1, tr.Calls[trace.DefaultCalls/2].Seq, "the tail starts with the oldest call it kept")
	require.Equal(t, n, tr.Calls[len(tr.Calls)-1].Seq)
	require.Equal(t, "https://example.test/form", tr.Calls[0].Page, "no query, no fragment")
	data, err := trace.Encode(tr)
	require.NoError(t, err)
	require.Less(t, len(data), 1<<20)
	t.Logf("%d calls kept of %d: %d bytes encoded, %.1f bytes a kept call", len(tr.Calls), n, len(data), float64(len(data))/float64(len(tr.Calls)))
}

// Every list has its cap, texts are cut, and only the first failures keep
// their screenshot.
func TestRecorderCapsEveryList(t *testing.T) {
	lim := trace.Limits{Calls: 4, Navigations: 3, Console: 5, Dialogs: 2, Steps: 6, Failures: 2, Text: 40, Image: 64, Outline: 50}
	r := trace.NewRecorder("run-2", lim)
	long := strings.Repeat("é", 1000)
	for range 10 {
		r.Call(trace.Call{Method: "tab.click", Target: long, Error: long})
		r.Navigation(trace.Navigation{Kind: "goto", URL: long})
		r.Console(trace.ConsoleLine{Level: "log", Text: long})
		r.Dialog(trace.Dialog{Type: "alert", Message: long})
		r.Step(trace.Step{Kind: "do", Name: long})
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 20)...)
	require.True(t, r.ClaimFailure())
	require.True(t, r.ClaimFailure())
	require.False(t, r.ClaimFailure(), "both places are claimed before either is filled")
	r.Failure(trace.Failure{Seq: 1, Image: png, ImageType: trace.PNG, Outline: long})
	r.Failure(trace.Failure{Seq: 2, Image: bytes.Repeat(png, 10), ImageType: trace.PNG})
	require.False(t, r.ClaimFailure())
	r.Failure(trace.Failure{Seq: 3, Image: png, ImageType: trace.PNG})

	tr := r.Trace()
	require.Len(t, tr.Calls, 4)
	require.Len(t, tr.Navigations, 3)
	require.Len(t, tr.Console, 5)
	require.Len(t, tr.Dialogs, 2)
	require.Len(t, tr.Steps, 6)
	require.Len(t, tr.Failures, 2)
	require.Equal(t, trace.Dropped{Calls: 6, Navigations: 7, Console: 5, Dialogs: 8, Steps: 4, Failures: 1}, tr.Dropped)
	for _, s := range []string{tr.Calls[0].Target, tr.Calls[0].Error, tr.Navigations[0].URL, tr.Console[0].Text, tr.Dialogs[0].Message, tr.Steps[0].Name} {
		require.LessOrEqual(t, len(s), 40)
		require.True(t, strings.HasSuffix(s, "…"), s)
	}
	require.Equal(t, png, tr.Failures[0].Image)
	require.LessOrEqual(t, len(tr.Failures[0].Outline), 50)
	require.Nil(t, tr.Failures[1].Image, "an image over the cap is left out")
	require.Empty(t, tr.Failures[1].ImageType)
	require.Contains(t, tr.Failures[1].Note, "too large")
}

// A Failure whose image is not of its stated type keeps no image.
func TestRecorderRefusesNonImages(t *testing.T) {
	r := trace.NewRecorder("run-3", trace.Limits{})
	r.Failure(trace.Failure{Seq: 1, Image: []byte("<svg onload=alert(1)>"), ImageType: trace.PNG})
	f := r.Trace().Failures[0]
	require.Nil(t, f.Image)
	require.Empty(t, f.ImageType)
}

func TestAddress(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@example.test/a/b?q=1#x": "https://example.test/a/b",
		"about:blank":                        "about:blank",
		"https://example.test/?":             "https://example.test/",
		"%zz?secret":                         "%zz",
	} {
		require.Equal(t, want, trace.Address(in), in)
	}
}

// A hundred thousand checks of one kind, value and outcome are one entry
// with its count; new ones past the limit are counted, not kept; every
// text is cut.
func TestRecorderAggregatesAccesses(t *testing.T) {
	r := trace.NewRecorder("run-1", trace.Limits{Accesses: 3, Text: 20})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 100_000
	for i := range n {
		r.Access("read", "/secret.txt", false, t0.Add(time.Duration(i)*time.Millisecond))
	}
	r.Access("read", "/secret.txt", true, t0)
	r.Access("env", strings.Repeat("N", 100), true, t0)
	r.Access("net", "a:1", false, t0)          // a fourth: dropped
	r.Access("net", "b:1", false, t0)          // a fifth: dropped
	r.Access("read", "/secret.txt", false, t0) // kept one: counted, not dropped
	r.AccessDropped(2)
	tr := r.Trace()
	require.Len(t, tr.Accesses, 3)
	a := tr.Accesses[0]
	require.Equal(t, trace.Access{Kind: "read", Value: "/secret.txt", Count: n + 1, First: t0, Last: t0.Add((n - 1) * time.Millisecond)}, a)
	require.True(t, tr.Accesses[1].Allowed)
	require.LessOrEqual(t, len(tr.Accesses[2].Value), 20)
	require.Equal(t, 4, tr.Dropped.Accesses)
	require.Equal(t, 4, tr.Dropped.Total())
	data, err := trace.Encode(tr)
	require.NoError(t, err)
	require.Less(t, len(data), 4<<10)
}

// A call's site may come after the call; a tab keeps the first title it
// is given, and its title is asked for once; action screenshots keep the
// first and last of them and refuse what is not an image.
func TestRecorderSitesTitlesShots(t *testing.T) {
	r := trace.NewRecorder("run-3", trace.Limits{Shots: 4, Text: 20})
	first := r.Call(trace.Call{Method: "tab.goto", Tab: "t1", File: "main.ts", Line: 3, Column: 7})
	second := r.Call(trace.Call{Method: "tab.fill", Tab: "t1"})
	r.SetSite(second, strings.Repeat("d/", 40)+"x.ts", 9, 2)
	r.SetSite(99, "never.ts", 1, 1) // no such call: nothing happens

	require.True(t, r.WantTitle("t1"))
	require.False(t, r.WantTitle("t1"), "asked once")
	r.TabTitle("t1", "First page")
	r.TabTitle("t1", "Second page")
	r.TabTitle("t2", "")
	require.True(t, r.WantTitle("t3"))
	require.False(t, r.WantTitle("t3"), "a tab's title is asked for once")
	r.TabTitle("t2", strings.Repeat("é", 50))

	jpeg := []byte("\xff\xd8\xff\xe0 x")
	for i := 1; i <= 10; i++ {
		r.Shot(trace.Shot{Seq: i, When: trace.Before, Image: jpeg, ImageType: trace.JPEG})
	}
	r.Shot(trace.Shot{Seq: 11, When: trace.After, Image: []byte("<svg>"), ImageType: trace.JPEG})
	r.Shot(trace.Shot{Seq: 12, When: "during", Image: jpeg, ImageType: trace.JPEG})

	tr := r.Trace()
	require.Equal(t, "main.ts", tr.Calls[first-1].File)
	require.Equal(t, 3, tr.Calls[first-1].Line)
	c := tr.Calls[second-1]
	require.LessOrEqual(t, len(c.File), 20)
	require.Equal(t, 9, c.Line)
	require.Equal(t, 2, c.Column)
	require.Len(t, tr.Tabs, 2)
	require.Equal(t, trace.TabTitle{Tab: "t1", Title: "First page"}, tr.Tabs[0])
	require.LessOrEqual(t, len(tr.Tabs[1].Title), 20)
	var seqs []int
	for _, s := range tr.Shots {
		seqs = append(seqs, s.Seq)
	}
	require.Equal(t, []int{1, 2, 9, 10}, seqs)
	require.Equal(t, 8, tr.Dropped.Shots, "six between the first and last, two refused")
}
