package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// magic starts every encoded trace; the number is the format's version.
// Version 2 added Accesses; Decode still reads version 1, which has none.
const (
	magic   = "tranquil-trace/2\n"
	magicV1 = "tranquil-trace/1\n"
)

// MaxDecoded bounds the JSON inside an encoded trace: far above what a
// Recorder with the default Limits makes, and small enough that a hostile
// file cannot make Decode hold much memory.
const MaxDecoded = 64 << 20

// ErrCorrupt is wrapped by every error Decode returns for input that is
// not a trace it wrote.
var ErrCorrupt = errors.New("trace: corrupt")

// CorruptError says why Decode refused its input.
type CorruptError struct{ Reason string }

func (e *CorruptError) Error() string { return "trace: corrupt: " + e.Reason }

// Unwrap makes a CorruptError match [ErrCorrupt].
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func corrupt(format string, args ...any) error {
	return &CorruptError{Reason: fmt.Sprintf(format, args...)}
}

// Encode returns t in the stored form: a version line, then t as
// gzip-compressed JSON.
func Encode(t *Trace) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(magic)
	z := gzip.NewWriter(&b)
	if err := json.NewEncoder(z).Encode(t); err != nil {
		return nil, fmt.Errorf("trace: encoding: %w", err)
	}
	if err := z.Close(); err != nil {
		return nil, fmt.Errorf("trace: encoding: %w", err)
	}
	return b.Bytes(), nil
}

// Decode reads a trace Encode wrote. Anything else, including a trace
// whose fields are out of range (a screenshot that is not an image of its
// stated type, say), is refused with a *[CorruptError].
func Decode(data []byte) (*Trace, error) {
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok {
		if rest, ok = bytes.CutPrefix(data, []byte(magicV1)); !ok {
			return nil, corrupt("not a trace (bad version line)")
		}
	}
	z, err := gzip.NewReader(bytes.NewReader(rest))
	if err != nil {
		return nil, corrupt("%v", err)
	}
	z.Multistream(false)
	js, err := io.ReadAll(io.LimitReader(z, MaxDecoded+1))
	if err != nil {
		return nil, corrupt("%v", err)
	}
	if len(js) > MaxDecoded {
		return nil, corrupt("more than %d bytes", MaxDecoded)
	}
	if !utf8.Valid(js) {
		return nil, corrupt("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var t Trace
	if err := dec.Decode(&t); err != nil {
		return nil, corrupt("%v", err)
	}
	if dec.More() {
		return nil, corrupt("data after the trace")
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	return &t, nil
}

// check refuses values a Recorder never makes.
func (t *Trace) check() error {
	last := 0
	for _, c := range t.Calls {
		if c.Seq <= last {
			return corrupt("call numbers out of order")
		}
		last = c.Seq
		if c.Duration < 0 {
			return corrupt("call %d has a negative duration", c.Seq)
		}
		if c.Line < 0 || c.Column < 0 {
			return corrupt("call %d has a negative line or column", c.Seq)
		}
	}
	for i, f := range t.Failures {
		if f.Seq <= 0 {
			return corrupt("failure %d names no call", i+1)
		}
		if f.Image == nil {
			if f.ImageType != "" {
				return corrupt("failure %d has an image type and no image", i+1)
			}
		} else if imageType(f.Image) != f.ImageType {
			return corrupt("failure %d: the image is not %q", i+1, f.ImageType)
		}
	}
	for i, sh := range t.Shots {
		switch {
		case sh.Seq <= 0:
			return corrupt("screenshot %d names no call", i+1)
		case sh.When != Before && sh.When != After:
			return corrupt("screenshot %d is neither before nor after its call", i+1)
		case imageType(sh.Image) != sh.ImageType:
			return corrupt("screenshot %d: the image is not %q", i+1, sh.ImageType)
		}
	}
	for i, tt := range t.Tabs {
		if tt.Tab == "" {
			return corrupt("tab title %d names no tab", i+1)
		}
	}
	seen := map[accessKey]bool{}
	for i, a := range t.Accesses {
		k := accessKey{a.Kind, a.Value, a.Allowed}
		switch {
		case a.Kind == "":
			return corrupt("access %d has no kind", i+1)
		case a.Count < 1:
			return corrupt("access %d was never made", i+1)
		case a.Last.Before(a.First):
			return corrupt("access %d ends before it starts", i+1)
		case seen[k]:
			return corrupt("access %d is listed twice", i+1)
		}
		seen[k] = true
	}
	d := t.Dropped
	for _, n := range []int{d.Calls, d.Navigations, d.Console, d.Dialogs, d.Steps, d.Failures, d.Accesses, d.Shots} {
		if n < 0 {
			return corrupt("a negative count of dropped items")
		}
	}
	return nil
}

// imageType is JPEG or PNG by the image's first bytes, or "".
func imageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return JPEG
	}
	return ""
}
