package runner

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// goWording is the rule hasGoWording follows, as the regular expression it
// replaces: the oracle its tests hold it to.
var goWording = regexp.MustCompile(`context deadline exceeded|context canceled|\bcdp[.:]|\brpcc\b|rpc error|(?i:websocket)|\bEOF\b|capnweb|\*[a-z]+\.[A-Z]\w+|\b(?:cdp|rpcc|runtime|net|os|io|syscall)\.[A-Z]\w+|goroutine|panic`)

func TestHasGoWording(t *testing.T) {
	for in, want := range map[string]bool{
		``:                             false,
		`no element matches "#x"`:      false,
		`cdp: target closed`:           true,
		`cdp.Input failed`:             true,
		`xcdp.Input`:                   false,
		`cdp`:                          false,
		`cdp!`:                         false,
		`rpcc`:                         true,
		`rpcc2`:                        false,
		`_rpcc`:                        false,
		`rpc error: code`:              true,
		`WebSocket closed`:             true,
		"webſocket":                    true,
		"WEBSOC\u212aET":               true,
		"websocke\xff":                 false,
		`unexpected EOF`:               true,
		`EOFs`:                         false,
		`éEOF`:                         true,
		`capnweb said no`:              true,
		`*cdp.LocatorError`:            true,
		`*CDP.LocatorError`:            false,
		`*.Error`:                      false,
		`*a.Bc`:                        true,
		`*a.B`:                         false,
		`*a.B_`:                        true,
		`net.OpError`:                  true,
		`internet.OpError`:             false,
		`os.PathError`:                 true,
		`ios.PathError`:                false,
		`(io.Reader`:                   true,
		`syscall.Errno`:                true,
		`runtime.Error`:                true,
		`runtime.error`:                false,
		`goroutine 1 [running]`:        true,
		`panic: x`:                     true,
		`context canceled`:             true,
		`context deadline exceeded`:    true,
		`context deadline`:             false,
		`.Ab at the start`:             false,
		`the page's title is "os.Ab"`:  true,
		`a.B.C *x.`:                    false,
		`text and then net.` + "\xffA": false,
	} {
		assert.Equal(t, want, goWording.MatchString(in), "the oracle, for %q", in)
		assert.Equal(t, want, hasGoWording(in), "%q", in)
	}
}

// Text built of the pieces the words start with is read once, not once
// per piece.
func TestHasGoWordingIsLinear(t *testing.T) {
	in := strings.Repeat("*a.Ab*a.A-web.os.Ea.rpc cdpc.W", 4<<20/30)
	start := time.Now()
	got := hasGoWording(in + "panic")
	took := time.Since(start)
	assert.True(t, got)
	assert.Less(t, took, time.Second, "4 MiB took %v", took)
}

func FuzzHasGoWording(f *testing.F) {
	for _, s := range []string{"*a.Bc", "net.Op", "ios.X", "WebſocKet", "\xffEOF", "cdp:", "rpcc_", "context canceled"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, got := goWording.MatchString(s), hasGoWording(s); got != want {
			t.Fatalf("hasGoWording(%q) = %v, want %v", s, got, want)
		}
	})
}

// hostileTexts are texts a script or a page can make a host read: the
// letters the words start with, over and over.
func hostileTexts(size int) map[string]string {
	texts := map[string]string{}
	for name, unit := range map[string]string{"plain": "x", "words": "net os io cdp ", "types": "*a.", "schemes": "wss://a/ "} {
		texts[name] = strings.Repeat(unit, size/len(unit))
	}
	return texts
}

func BenchmarkHasGoWording(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		for name, msg := range hostileTexts(size.bytes) {
			b.Run("scan/"+size.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					hasGoWording(msg)
				}
			})
			b.Run("regexp/"+size.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					goWording.MatchString(msg)
				}
			})
		}
	}
}
