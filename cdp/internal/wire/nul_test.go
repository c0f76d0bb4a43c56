package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// A message over the limit that limitOf answers for its first buffer is
// dropped with that limit; one within it comes back whole.
func TestNULReaderLimitOf(t *testing.T) {
	big := `{"id":7,"result":"` + strings.Repeat("x", 100) + `"}`
	stream := big + "\x00" + big + "\x00"
	nr := NewNULReader(strings.NewReader(stream), 1<<20, 16)
	calls := 0
	_, err := nr.Next(func(head []byte) int64 {
		calls++
		if id, ok := LeadingID(head); !ok || id != 7 {
			t.Errorf("limitOf saw %q", head)
		}
		return 50
	})
	var d *Dropped
	if !errors.As(err, &d) || d.Limit != 50 || d.Size != int64(len(big)) {
		t.Fatalf("got %v, want a *Dropped of %d bytes at limit 50", err, len(big))
	}
	if id, ok := LeadingID(d.Head); !ok || id != 7 {
		t.Errorf("the head %q lost the id", d.Head)
	}
	got, err := nr.Next(func([]byte) int64 { return 0 })
	if err != nil || string(got) != big || calls != 1 {
		t.Fatalf("got %q, %v after %d limitOf calls", got, err, calls)
	}
	if _, err := nr.Next(nil); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
}

// chunkReader returns at most n bytes per Read, to split messages across
// reads at every place.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// FuzzNULReader checks the pipe's framing against bytes.Split, for any
// stream, read size and limit: every complete message comes back whole or,
// over the limit, as a *Dropped with its true size, head and tail;
// a trailing partial message is io.ErrUnexpectedEOF, a clean end io.EOF.
func FuzzNULReader(f *testing.F) {
	f.Add([]byte("{\"id\":1,\"result\":{}}\x00{\"method\":\"X\"}\x00"), uint8(3), uint16(64))
	f.Add([]byte("\x00\x00abc"), uint8(1), uint16(1))
	f.Add([]byte(strings.Repeat("y", 100)+"\x00z\x00"), uint8(16), uint16(20))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8, limit uint16) {
		max := int64(limit)
		// The smallest buffer, so that messages span refills.
		nr := NewNULReader(&chunkReader{b: data, n: int(chunk%32) + 1}, max, 16)
		parts := bytes.Split(data, []byte{0})
		for _, want := range parts[:len(parts)-1] {
			got, err := nr.Next(nil)
			if int64(len(want)) > max {
				var o *Dropped
				if !errors.As(err, &o) {
					t.Fatalf("message of %d bytes over limit %d: got %q, %v", len(want), max, got, err)
				}
				if o.Size != int64(len(want)) || !bytes.Equal(o.Head, want[:min(len(want), HeadLen)]) ||
					!bytes.Equal(o.Tail, want[len(want)-min(len(want), TailLen):]) {
					t.Fatalf("oversize record %d %q %q for %q", o.Size, o.Head, o.Tail, want)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
		}
		_, err := nr.Next(nil)
		want := io.EOF
		if len(parts[len(parts)-1]) > 0 {
			want = io.ErrUnexpectedEOF
		}
		if err != want {
			t.Fatalf("at the end: %v, want %v", err, want)
		}
	})
}
