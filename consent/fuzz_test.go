package consent

import (
	"errors"
	"testing"

	"github.com/tranquil/automation/permissions"
)

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"approvals":{"/a/b.ts":{"header":"browser net=x.example timeout=15m","approved_at":"2026-01-01T00:00:00Z"}}}`))
	f.Add([]byte(`{"version":1,"approvals":{}}`))
	f.Add([]byte(`{"version":1,"approvals":{"/a.ts":{"header":"read=\"/a b\" none"}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error is not ErrCorrupt: %v", err)
			}
			return
		}
		for k, a := range all {
			if a.Script != k {
				t.Fatalf("entry keyed %q names %q", k, a.Script)
			}
			if _, err := permissions.ParseCanonical(a.Header); err != nil {
				t.Fatalf("accepted an approval whose header does not parse: %q", a.Header)
			}
		}
	})
}
