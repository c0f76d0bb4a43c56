package consent

import (
	"errors"
	"testing"

	"github.com/tranquil/automation/permissions"
)

// fuzzKey signs the seed corpus's version 2 entries.
var fuzzKey = []byte("consent fuzz key, 32 bytes long!")

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"approvals":{"/a/b.ts":{"header":"browser net=x.example timeout=15m","approved_at":"2026-01-01T00:00:00Z"}}}`))
	f.Add([]byte(`{"version":1,"approvals":{}}`))
	f.Add([]byte(`{"version":1,"approvals":{"/a.ts":{"header":"read=\"/a b\" none"}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":2,"approvals":{"/a/b.ts":{"header":"browser","approved_at":"2026-01-01T00:00:00Z","mac":"00"}}}`))
	decode, encode := decoder(fuzzKey), encoder(fuzzKey)
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error is not ErrCorrupt: %v", err)
			}
			return
		}
		for k, a := range all.ok {
			if a.Script != k {
				t.Fatalf("entry keyed %q names %q", k, a.Script)
			}
			if _, err := permissions.ParseCanonical(a.Header); err != nil {
				t.Fatalf("accepted an approval whose header does not parse: %q", a.Header)
			}
			if _, bad := all.rejected[k]; bad {
				t.Fatalf("%q is both accepted and rejected", k)
			}
		}
		// What the store writes back reads as the same approvals, all of
		// them verified, and nothing rejected.
		out, err := encode(all)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decode(out)
		if err != nil {
			t.Fatalf("re-reading what was written: %v", err)
		}
		if len(again.rejected) != 0 || len(again.ok) != len(all.ok) {
			t.Fatalf("round trip: %d accepted, %d rejected; want %d and 0", len(again.ok), len(again.rejected), len(all.ok))
		}
		for k, a := range all.ok {
			if b := again.ok[k]; b.Header != a.Header || !b.ApprovedAt.Equal(a.ApprovedAt) {
				t.Fatalf("round trip changed %q: %+v became %+v", k, a, b)
			}
		}
	})
}
