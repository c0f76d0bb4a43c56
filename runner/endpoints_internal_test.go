package runner

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// devtoolsURL is the rule scrubEndpoints follows, as the regular
// expression it replaces: the oracle its tests hold it to.
var devtoolsURL = regexp.MustCompile(`(?i)\b(?:wss?|https?)://[^\s"'<>]*/devtools/[^\s"'<>]*`)

func TestScrubEndpoints(t *testing.T) {
	for in, want := range map[string]string{
		``:       ``,
		`no url`: `no url`,
		`dial ws://127.0.0.1:9222/devtools/browser/abc: refused`:          `dial <devtools endpoint> refused`,
		`"http://127.0.0.1:9222/devtools/page/X" and wss://h/DevTools/x'`: `"<devtools endpoint>" and <devtools endpoint>'`,
		"HTTPS://a/devtools/":                        "<devtools endpoint>",
		"wſ://a/devtoolſ/b c":                        "<devtools endpoint> c",
		"xws://a/devtools/b":                         "xws://a/devtools/b",
		"é ws:///devtools/":                          "é <devtools endpoint>",
		"éws:///devtools/":                           "é<devtools endpoint>",
		"ws://a/devtool/b ws://x/devtools/":          "ws://a/devtool/b <devtools endpoint>",
		"/devtools/ ws://a":                          "/devtools/ ws://a",
		"a/devtools/ws://a":                          "a/devtools/ws://a",
		"ws://ws://a/devtools/\xff\tws://b/devtools": "<devtools endpoint>\tws://b/devtools",
		"http://a/devtools/b\vc<d":                   "<devtools endpoint><d",
		"http:/a/devtools/b":                         "http:/a/devtools/b",
		"wss:/ws://devtools/x/devtools/":             "wss:/<devtools endpoint>",
	} {
		assert.Equal(t, want, devtoolsURL.ReplaceAllString(in, "<devtools endpoint>"), "the oracle, for %q", in)
		assert.Equal(t, want, scrubEndpoints(in), "%q", in)
	}
}

// A run of schemes without an end is read a few times, not once per
// scheme.
func TestScrubEndpointsIsLinear(t *testing.T) {
	in := strings.Repeat("ws://h/devtools", 4<<20/15) + "/"
	start := time.Now()
	out := scrubEndpoints(in)
	took := time.Since(start)
	assert.Equal(t, "<devtools endpoint>", out)
	assert.Less(t, took, time.Second, "4 MiB took %v", took)
}

func FuzzScrubEndpoints(f *testing.F) {
	for _, s := range []string{"ws://a/devtools/b", "HTTPS://x/DEVTOOLS/", "wſ:///devtoolſ/", "a ws:// /devtools/", "xhttp://a/devtools/", "ws://ws://a/devtools/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, got := devtoolsURL.ReplaceAllString(s, "<devtools endpoint>"), scrubEndpoints(s); got != want {
			t.Fatalf("scrubEndpoints(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkScrubEndpoints(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		texts := hostileTexts(size.bytes)
		texts["unended"] = strings.Repeat("ws://h/devtools", size.bytes/15)
		for name, msg := range texts {
			b.Run("scan/"+size.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					scrubEndpoints(msg)
				}
			})
			b.Run("regexp/"+size.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					devtoolsURL.ReplaceAllString(msg, "<devtools endpoint>")
				}
			})
		}
	}
}
