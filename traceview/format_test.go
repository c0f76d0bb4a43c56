package traceview

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/trace"
)

func TestCompactTimes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                        "0.0 ms",
		400 * time.Microsecond:   "0.4 ms",
		850 * time.Millisecond:   "850 ms",
		999 * time.Millisecond:   "999 ms",
		time.Second:              "1.0 s",
		11449 * time.Millisecond: "11.4 s",
		59999 * time.Millisecond: "59.9 s",
		125 * time.Second:        "2 min 05 s",
		time.Hour + 2*time.Minute + 9*time.Second: "1 h 02 min",
	} {
		assert.Equal(t, want, span(d), "%v", d)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, "+0.4 s", offset(t0, t0.Add(420*time.Millisecond)))
	assert.Equal(t, "+0.0 s", offset(t0, t0.Add(-time.Second)), "a clock step reads as the start")
	assert.Equal(t, "+1 min 05 s", offset(t0, t0.Add(65*time.Second)))
}

func TestBars(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, bar{X: 250, W: 500}, barOf(t0, t0.Add(time.Second), 2*time.Second, 4*time.Second))
	assert.Equal(t, bar{X: 0, W: minBar}, barOf(t0, t0, 0, time.Second), "a sliver for a call too short to see")
	assert.Equal(t, bar{X: barScale - minBar, W: minBar}, barOf(t0, t0.Add(time.Hour), time.Hour, time.Second), "never past the end")
	assert.Equal(t, bar{X: 0, W: barScale}, barOf(t0, t0.Add(-time.Second), time.Hour, time.Second))
	assert.Equal(t, bar{W: minBar}, barOf(t0, t0, time.Second, 0))
}

func TestWhyAndFirstErrorOnce(t *testing.T) {
	assert.True(t, sameSentence("the script threw: Error: boom", "Error: boom"))
	assert.True(t, sameSentence(" Error: boom\n", "Error: boom"))
	assert.False(t, sameSentence("cancelled by the user", "Error: boom"))
	assert.False(t, sameSentence("", "Error: boom"))
}

func TestResultBoundedAndPretty(t *testing.T) {
	assert.Equal(t, "{\n  \"a\": [\n    1\n  ]\n}", prettyJSON([]byte(`{"a":[1]}`)))
	big := prettyJSON([]byte(`"` + strings.Repeat("é", maxResult) + `"`))
	assert.LessOrEqual(t, len(big), maxResult+len("…"))
	assert.True(t, strings.HasSuffix(big, "…"))
	assert.Empty(t, prettyJSON(nil))
}

// The SDK's settings, files and bridge fold into one line; the script's
// own accesses, and anything denied, stay listed.
func TestFoldSDKAccesses(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := func(kind, v string, ok bool) trace.Access {
		return trace.Access{Kind: kind, Value: v, Allowed: ok, Count: 1, First: t0, Last: t0}
	}
	v := fold([]trace.Access{
		a("read", "/data/sdk/sdk-0123456789abcdef/main.ts", true),
		a("env", "TRANQUIL_RPC_URL", true),
		a("net", "127.0.0.1:40000", true),
		a("net", "127.0.0.1:8080", true), // the script's own server
		a("env", "TRANQUIL_TRIGGER", false),
		a("read", "/data/sdk/sdk-0123456789abcdef/../../secrets", true),
		a("read", "/home/u/sdk/notes.txt", true),
	}, "")
	assert.Equal(t, 3, v.Recognised)
	assert.Equal(t, 3, v.SDK.Count)
	assert.Equal(t, "env, net, read", v.SDKKinds)
	var listed []string
	for _, s := range v.Script {
		listed = append(listed, s.Value)
	}
	assert.Equal(t, []string{"127.0.0.1:8080", "TRANQUIL_TRIGGER", "/data/sdk/sdk-0123456789abcdef/../../secrets", "/home/u/sdk/notes.txt"}, listed)

	// A loopback connection before the SDK's settings were read is not
	// the bridge: the SDK reads them first.
	v = fold([]trace.Access{a("net", "127.0.0.1:40000", true), a("env", "TRANQUIL_RPC_URL", true)}, "")
	assert.Equal(t, 1, v.Recognised)
	assert.Len(t, v.Script, 1)

	// A host that names its SDK folder: only files under it.
	assert.True(t, sdkFile(`C:\Users\u\AppData\app\sdk\sdk-0123456789abcdef\mod.ts`, ""))
	assert.True(t, sdkFile("/srv/app/sdk/x/mod.ts", "/srv/app/sdk"))
	assert.False(t, sdkFile("/srv/app/sdkother/mod.ts", "/srv/app/sdk"))
	assert.False(t, sdkFile("/srv/app/sdk/../secrets", "/srv/app/sdk"))
	assert.False(t, sdkFile("/srv/app/sdk/sdk-XYZ/mod.ts", ""))
}
