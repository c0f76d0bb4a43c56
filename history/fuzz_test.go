package history

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeFile feeds arbitrary bytes to the journal decoder, which reads
// a file any program could have written. It must never panic, must either
// decode or report ErrCorrupt, and what it decodes must survive a rewrite
// unchanged.
func FuzzDecodeFile(f *testing.F) {
	e := fullEntry("seed", t0)
	ne, _ := normalize(e)
	whole, _ := encodeFile("00000000000000aa", []Entry{ne, {ID: "q", Kind: KindScript, State: StateQueued}})
	f.Add(whole)
	f.Add(whole[:len(whole)-7])                      // torn last line
	f.Add(append(bytes.Clone(whole), 0, 0, 0, 0, 0)) // zeros after a crash
	f.Add([]byte{})
	f.Add([]byte("not a journal\n"))
	f.Add(encodeHeader("0123456789abcdef"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeFile(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		if d.size > len(data) {
			t.Fatalf("consumed %d of %d bytes", d.size, len(data))
		}
		if d.gen == "" {
			if len(data) != 0 {
				t.Fatalf("no generation for %d bytes", len(data))
			}
			return
		}
		again, err := encodeFile(d.gen, d.records)
		if err != nil {
			t.Fatalf("re-encoding decoded entries: %v", err)
		}
		d2, err := decodeFile(again)
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if d2.size != len(again) || len(d2.records) != len(d.records) {
			t.Fatalf("rewrite changed the journal: %d/%d records", len(d2.records), len(d.records))
		}
		for i := range d.records {
			a, b := d.records[i], d2.records[i]
			ea, _ := encodeEntry(a)
			eb, _ := encodeEntry(b)
			if !bytes.Equal(ea, eb) {
				t.Fatalf("entry %d changed in a rewrite:\n%s\n%s", i, ea, eb)
			}
		}
	})
}

// FuzzDecodeEntry fuzzes the JSON of one entry line behind a valid
// checksum, which FuzzDecodeFile's mutations rarely get past. An entry that
// decodes must be storable and encode back to itself.
func FuzzDecodeEntry(f *testing.F) {
	ne, _ := normalize(fullEntry("seed", t0))
	line, _ := encodeEntry(ne)
	f.Add(line[9 : len(line)-1])
	f.Add([]byte(`{"id":"a","kind":"script","state":"queued","start":"2026-01-02T03:04:05+02:00","end":"0001-01-01T00:00:00Z","duration_ns":0}`))
	f.Add([]byte(`{"id":"a","state":"failed","result":"{\"x\": [1, 2]}","exit_code":-1}`))
	f.Add([]byte(`{"id":"a","state":"succeeded","result":"{not json"}`))
	f.Add([]byte(`{"id":"","state":"queued"}`))
	f.Add([]byte(`{"id":"a","state":"running","actions":[{"at":"2026-01-01T00:00:00Z","method":"tab.fill"}]}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		framed := frame(js)
		e, err := decodeEntry(framed[:len(framed)-1])
		if err != nil {
			return
		}
		n, err := normalize(e)
		if err != nil {
			t.Fatalf("decoded entry not storable: %v", err)
		}
		enc, err := encodeEntry(n)
		if err != nil {
			t.Fatalf("encoding: %v", err)
		}
		back, err := decodeEntry(enc[:len(enc)-1])
		if err != nil {
			t.Fatalf("decoding own encoding: %v\n%s", err, enc)
		}
		enc2, _ := encodeEntry(back)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("not a fixed point:\n%s\n%s", enc, enc2)
		}
	})
}
