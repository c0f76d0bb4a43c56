package capnweb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// stdParse is encoding/json's reading of a frame, the reference parseJSON
// must agree with.
func stdParse(msg []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

var jsonCases = []string{
	`1`, `-0`, `-0.5e+10`, `1E5`, `0.25`, `123456789012345678901234567890`, `"s"`, `""`, `null`, `true`, `false`,
	`[]`, `{}`, ` [ 1 , 2 ] `, "\t{\"a\" :\n[true,false,null]}\r\n", `{"a":1,"a":2}`, `[[["x"]]]`,
	`"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`,
	"\"caf\xc3\xa9\"", "\"bad \xff byte\"", "\"\xe2\x82\"", `"\uD83D\uDE00"`, `{"k\u0000":"v"}`,
	// Refused.
	``, ` `, `[`, `]`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `+1`,
	`1e`, `1e+`, `tru`, `nul`, `truex`, `"abc`, "\"a\nb\"", `"\x"`, `"\u12"`, `"\u12g4"`, `[1]x`, `1 2`,
	"\xef\xbb\xbf1", `NaN`, `Infinity`, `'s'`, `[1 2]`, `{"a":1 "b":2}`, `"\`, `{"a":1}}`,
}

func TestParseJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		checkJSONAgreement(t, []byte(c))
	}
	deep := strings.Repeat("[", maxJSONNesting) + strings.Repeat("]", maxJSONNesting)
	checkJSONAgreement(t, []byte(deep))
	tooDeep := strings.Repeat("[", maxJSONNesting+1) + strings.Repeat("]", maxJSONNesting+1)
	checkJSONAgreement(t, []byte(tooDeep))
}

func TestParseJSONErrorIsProtocolError(t *testing.T) {
	_, err := parseJSON([]byte(`[1,`))
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "invalid JSON") {
		t.Fatalf("got %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Name != NameSyntaxError {
		t.Fatalf("got %#v", err)
	}
}

// reused is one parser kept across inputs, as a session keeps its own,
// so that leftovers from one frame cannot leak into the next.
var reused struct {
	sync.Mutex
	p jsonParser
}

func checkJSONAgreement(t testing.TB, data []byte) {
	t.Helper()
	want, wantErr := stdParse(data)
	got, gotErr := parseJSON(data)
	reused.Lock()
	again, againErr := reused.p.parse(data)
	reused.Unlock()
	if (gotErr == nil) != (againErr == nil) || !reflect.DeepEqual(got, again) {
		t.Fatalf("%q: a fresh parser gives %#v (%v), a reused one %#v (%v)", data, got, gotErr, again, againErr)
	}
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json says %v, parseJSON says %v", data, wantErr, gotErr)
	}
	if wantErr == nil && !reflect.DeepEqual(want, mapsOf(got)) {
		t.Fatalf("%q: encoding/json gives %#v, parseJSON %#v", data, want, got)
	}
	if gotErr != nil && !errors.Is(gotErr, ErrProtocol) {
		t.Fatalf("%q: error %v is not a protocol error", data, gotErr)
	}
}

// mapsOf turns the parser's *Object nodes into maps, the form
// encoding/json produces.
func mapsOf(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapsOf(e)
		}
		return out
	case *Object:
		out := map[string]any{}
		for k, e := range x.All() {
			out[k] = mapsOf(e)
		}
		return out
	}
	return v
}

func TestParseJSONKeepsKeyOrder(t *testing.T) {
	v, err := parseJSON([]byte(`{"b":1,"a":2,"10":3,"2":4,"b":5,"x1":6,"01":7}`))
	require.NoError(t, err)
	o := v.(*Object)
	// As JSON.parse: index keys first in numeric order, a repeated key
	// keeps its first place and its last value.
	require.Equal(t, []string{"2", "10", "b", "a", "x1", "01"}, o.Keys())
	b, _ := o.Get("b")
	require.Equal(t, json.Number("5"), b)
}

// FuzzParseJSON checks parseJSON against encoding/json on any input.
func FuzzParseJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkJSONAgreement(t, data)
	})
}

func BenchmarkParseJSON(b *testing.B) {
	frame := []byte(`["push",["pipeline",0,["echo"],["` + strings.Repeat("x", 1024) + `"]]]`)
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parseJSON(frame)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stdParse(frame)
		}
	})
}

func TestLeadingID(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int64
		rest string
		ok   bool
	}{
		{"1]", 1, "]", true},
		{"0,1]", 0, ",1]", true},
		{"-3]", -3, "]", true},
		{"123456789012345]", 123456789012345, "]", true},
		{"1234567890123456]", 0, "", false}, // 16 digits: maybe not a safe integer
		{"01]", 0, "", false},
		{"-]", 0, "", false},
		{"]", 0, "", false},
		{"", 0, "", false},
		{"1.5]", 1, ".5]", true}, // the caller sees the rest is not "]"
	} {
		n, rest, ok := leadingID([]byte(c.in))
		if ok != c.ok || ok && (n != c.n || string(rest) != c.rest) {
			t.Errorf("leadingID(%q) = %d, %q, %v", c.in, n, rest, ok)
		}
	}
}

// TestFastFramesMatchTheGeneralPath feeds pull and release frames in many
// spellings to two sessions, one through handleFast and one through the
// general path only, and checks they end the same way.
func TestFastFramesMatchTheGeneralPath(t *testing.T) {
	for _, frame := range []string{
		`["pull",1]`, `["pull",2]`, `["pull", 1]`, `["pull",1.0]`, `["pull",01]`, `["pull",-1]`, `["pull",1,2]`,
		`["release",1,1]`, `["release",1,2]`, `["release",1,0]`, `["release",1,-1]`, `["release", 1,1]`,
		`["release",1,1e0]`, `["release",1]`, `["release",1,1,1]`, `["release",99,1]`, `["pull",1]x`,
	} {
		results := [2]string{}
		for i, fast := range []bool{true, false} {
			ft := &frameTransport{in: make(chan []byte), out: make(chan []byte, 8), done: make(chan struct{})}
			s, err := NewSession(ft, benchAPI{}, nil)
			require.NoError(t, err)
			// Export 1: a settled push the frames can name.
			require.NoError(t, s.handle([]byte(`["push",["pipeline",0,["add"],[1,2]]]`)))
			var herr error
			done := false
			if fast {
				done, herr = s.handleFast([]byte(frame))
			}
			if !done {
				v, perr := s.parser.parse([]byte(frame))
				herr = perr
				if perr == nil {
					herr = s.handleValue(v, []byte(frame), nil)
				}
			}
			results[i] = fmt.Sprint(herr)
			close(ft.done)
			s.Close()
		}
		if results[0] != results[1] {
			t.Errorf("%s: fast path says %q, general path %q", frame, results[0], results[1])
		}
	}
}
