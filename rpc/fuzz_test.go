package rpc

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseAuth(f *testing.F) {
	tok := strings.Repeat("ab", 32)
	f.Add([]byte("AUTH " + tok + ` {"protocol":1,"sdk":"0.1.0","capabilities":["ui","tabs"]}`))
	f.Add([]byte("AUTH " + tok + ` {"protocol":1,"sdk":"0.1.0","capabilities":[]} {}`))
	f.Add([]byte("AUTH " + tok + ` {"protocol":2}`))
	f.Add([]byte(`["push",["pipeline",0,["ui"]]]`))
	f.Add([]byte("AUTH x y"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		token, h, err := ParseAuth(frame)
		if err != nil {
			if !errors.Is(err, ErrHandshake) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if len(token) != TokenLen || !isLowerHex([]byte(token)) {
			t.Fatalf("accepted token %q", token)
		}
		if h.Protocol != ProtocolVersion || h.SDK == "" || len(h.Capabilities) > 64 {
			t.Fatalf("accepted hello %+v", h)
		}
		for _, c := range h.Capabilities {
			if !capName(string(c)) {
				t.Fatalf("accepted capability %q", c)
			}
		}
	})
}
