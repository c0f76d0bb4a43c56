package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/trace"
)

// sample is a trace with one of everything.
func sample() *trace.Trace {
	r := trace.NewRecorder("run-42", trace.Limits{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	r.Call(trace.Call{Method: "tab.fill", Target: `{label: "Name"}`, Tab: "t1", Page: "https://example.test/", Start: at, Duration: 12 * time.Millisecond})
	seq := r.Call(trace.Call{Method: "tab.click", Target: `{role: button, name: "Send"}`, Tab: "t1", Start: at, Duration: time.Second, Code: "not_found", Error: "no element matches"})
	r.Navigation(trace.Navigation{At: at, Tab: "t1", Kind: "goto", URL: "https://example.test/"})
	r.Console(trace.ConsoleLine{At: at, Tab: "t1", Level: "log", Text: "hello <b>"})
	r.Dialog(trace.Dialog{At: at, Tab: "t1", Type: "confirm", Message: "Sure?", Accepted: true})
	r.Step(trace.Step{At: at, Kind: "do", Name: "log in", Phase: "end", Attempt: 1, OK: true, Fraction: -1})
	r.Failure(trace.Failure{Seq: seq, Image: []byte("\xff\xd8\xff\xe0 jpeg"), ImageType: trace.JPEG, Outline: "main\n  button \"Send\""})
	r.Access("read", "/work/in.txt", true, at)
	r.Access("net", "127.0.0.1:1", false, at)
	r.Access("net", "127.0.0.1:1", false, at.Add(time.Second))
	r.SetSite(seq, "lib/form.ts", 12, 5)
	r.TabTitle("t1", "Example <Domain>")
	r.Shot(trace.Shot{Seq: seq, When: trace.Before, Image: []byte("\xff\xd8\xff\xe0 before"), ImageType: trace.JPEG})
	return r.Trace()
}

func TestEncodeRoundTrip(t *testing.T) {
	want := sample()
	data, err := trace.Encode(want)
	require.NoError(t, err)
	got, err := trace.Decode(data)
	require.NoError(t, err)
	require.Equal(t, want, got)

	require.Equal(t, []trace.Access{
		{Kind: "read", Value: "/work/in.txt", Allowed: true, Count: 1, First: want.Accesses[0].First, Last: want.Accesses[0].First},
		{Kind: "net", Value: "127.0.0.1:1", Count: 2, First: want.Accesses[1].First, Last: want.Accesses[1].First.Add(time.Second)},
	}, got.Accesses)

	empty, err := trace.Encode(&trace.Trace{RunID: "r"})
	require.NoError(t, err)
	got, err = trace.Decode(empty)
	require.NoError(t, err)
	require.Equal(t, &trace.Trace{RunID: "r"}, got)
}

// gz is an encoded trace whose JSON is js.
func gz(js string) []byte {
	var b bytes.Buffer
	b.WriteString("tranquil-trace/2\n")
	z := gzip.NewWriter(&b)
	z.Write([]byte(js))
	z.Close()
	return b.Bytes()
}

// bombOf is an encoded trace whose JSON would be n bytes.
func bombOf(n int) []byte {
	var b bytes.Buffer
	b.WriteString("tranquil-trace/2\n")
	z, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	z.Write([]byte(`{"RunID":"`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		z.Write(chunk[:k])
		n -= k
	}
	z.Close()
	return b.Bytes()
}

func TestDecodeRefusesCorrupt(t *testing.T) {
	good, err := trace.Encode(sample())
	require.NoError(t, err)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-5] ^= 0xff
	bomb := bombOf(trace.MaxDecoded + 1)
	for name, data := range map[string][]byte{
		"empty":              nil,
		"no version":         good[len("tranquil-trace/2\n"):],
		"other version":      append([]byte("tranquil-trace/3\n"), good[len("tranquil-trace/2\n"):]...),
		"cut":                good[:len(good)-10],
		"flipped":            flipped,
		"not json":           gz("nope"),
		"unknown field":      gz(`{"Evil":1}`),
		"two values":         gz(`{} {}`),
		"calls out of order": gz(`{"Calls":[{"Seq":2},{"Seq":1}]}`),
		"negative duration":  gz(`{"Calls":[{"Seq":1,"Duration":-1}]}`),
		"image not png":      gz(`{"Failures":[{"Seq":1,"Image":"PHN2Zz4=","ImageType":"image/png"}]}`),
		"type no image":      gz(`{"Failures":[{"Seq":1,"ImageType":"image/png"}]}`),
		"negative dropped":   gz(`{"Dropped":{"Calls":-1}}`),
		"access no kind":     gz(`{"Accesses":[{"Value":"x","Count":1}]}`),
		"access never made":  gz(`{"Accesses":[{"Kind":"read","Value":"x","Count":0}]}`),
		"access backwards":   gz(`{"Accesses":[{"Kind":"read","Count":1,"First":"2026-01-02T00:00:00Z","Last":"2026-01-01T00:00:00Z"}]}`),
		"access twice":       gz(`{"Accesses":[{"Kind":"env","Value":"A","Count":1},{"Kind":"env","Value":"A","Count":2}]}`),
		"negative accesses":  gz(`{"Dropped":{"Accesses":-1}}`),
		"negative line":      gz(`{"Calls":[{"Seq":1,"File":"a.ts","Line":-1}]}`),
		"shot no call":       gz(`{"Shots":[{"Seq":0,"When":"before","Image":"/9j/","ImageType":"image/jpeg"}]}`),
		"shot when":          gz(`{"Shots":[{"Seq":1,"When":"during","Image":"/9j/","ImageType":"image/jpeg"}]}`),
		"shot not jpeg":      gz(`{"Shots":[{"Seq":1,"When":"after","Image":"PHN2Zz4=","ImageType":"image/jpeg"}]}`),
		"negative shots":     gz(`{"Dropped":{"Shots":-1}}`),
		"title no tab":       gz(`{"Tabs":[{"Title":"x"}]}`),
		"bomb":               bomb,
		"invalid utf-8":      gz("{\"RunID\":\"\xff\"}"),
	} {
		_, err := trace.Decode(data)
		var ce *trace.CorruptError
		require.True(t, errors.As(err, &ce), "%s: %v", name, err)
		require.ErrorIs(t, err, trace.ErrCorrupt, name)
	}
}

// A trace stored before accesses were recorded (version 1) still reads.
func TestDecodeReadsVersion1(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("tranquil-trace/1\n")
	z := gzip.NewWriter(&b)
	z.Write([]byte(`{"RunID":"old","Calls":[{"Seq":1,"Method":"tab.goto"}]}`))
	z.Close()
	got, err := trace.Decode(b.Bytes())
	require.NoError(t, err)
	require.Equal(t, "old", got.RunID)
	require.Empty(t, got.Accesses)
}
