package capnweb

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
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

func checkJSONAgreement(t testing.TB, data []byte) {
	t.Helper()
	want, wantErr := stdParse(data)
	got, gotErr := parseJSON(data)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json says %v, parseJSON says %v", data, wantErr, gotErr)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("%q: encoding/json gives %#v, parseJSON %#v", data, want, got)
	}
	if gotErr != nil && !errors.Is(gotErr, ErrProtocol) {
		t.Fatalf("%q: error %v is not a protocol error", data, gotErr)
	}
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
