package mirror

import (
	"errors"
	"testing"
)

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"scripts":{"/a/b.ts":{"dest":"/r","declared_at":"2026-01-01T00:00:00Z","state":{"copied":0,"unchanged":0,"skipped_total":0}}},"workspaces":{}}`))
	f.Add([]byte(`{"version":1,"scripts":{},"workspaces":{"/w":{"dest":"/d","declared_at":"2026-01-01T00:00:00Z","state":{"last_sync":"2026-01-02T00:00:00Z","trigger":"sync","copied":2,"unchanged":1,"skipped":[{"path":"/w/out/l","reason":"source-link-escapes"}],"skipped_total":1,"last_error":""}}}}`))
	f.Add([]byte(`{"version":1,"scripts":{"/a.ts":{"dest":"rel","state":{}}}}`))
	f.Add([]byte(`{"version":1,"scripts":{"/a.ts":{"dest":"/d","state":{"copied":3}}}}`))
	f.Add([]byte(`{"version":1,"scripts":{"/a.ts":{"dest":"/d","state":{"last_sync":"2026-01-02T00:00:00Z","skipped":[{"path":"/x","reason":"mystery"}],"skipped_total":1}}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error is not ErrCorrupt: %v", err)
			}
			return
		}
		for _, tbl := range []map[string]Mirror{all.scripts, all.workspaces} {
			for k, m := range tbl {
				if m.Key != k {
					t.Fatalf("entry keyed %q names %q", k, m.Key)
				}
				if err := m.valid(); err != nil {
					t.Fatalf("accepted an invalid mirror: %v", err)
				}
				if m.State.Outcome() == OutcomeNever && (m.State.Copied != 0 || m.State.LastError != "") {
					t.Fatalf("a never-synced mirror carries results: %+v", m.State)
				}
			}
		}
		// What decodes re-encodes to the same declarations.
		out, err := encode(all)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decode(out)
		if err != nil {
			t.Fatalf("re-encoded store does not decode: %v\n%s", err, out)
		}
		if len(again.scripts) != len(all.scripts) || len(again.workspaces) != len(all.workspaces) {
			t.Fatalf("round trip changed the declarations")
		}
	})
}
