package cdp

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSessionIDOf checks the fast tail scan against a full decode: for any
// frame the browser could send, both must agree on the session.
func FuzzSessionIDOf(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":{},"sessionId":"ABC"}`))
	f.Add([]byte(`{"method":"Target.attachedToTarget","params":{"sessionId":"X"}}`))
	f.Add([]byte(`{"method":"Runtime.consoleAPICalled","params":{"s":",\"sessionId\":\"evil\"}"},"sessionId":"real"}`))
	f.Add([]byte(`{"id":2,"result":{"v":"a\",\"sessionId\":\"Z"}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, ok := sessionIDOf(data)
		var probe struct {
			SessionID string `json:"sessionId"`
		}
		err := json.Unmarshal(data, &probe)
		if err != nil {
			if ok && !strings.HasSuffix(string(data), `"}`) {
				t.Fatalf("accepted invalid JSON %q", data)
			}
			return
		}
		if !ok || id != probe.SessionID {
			t.Fatalf("sessionIDOf(%q) = %q, %v; full decode says %q", data, id, ok, probe.SessionID)
		}
	})
}

// FuzzParseActivePort feeds arbitrary DevToolsActivePort contents: the
// result is either an error or a loopback browser URL.
func FuzzParseActivePort(f *testing.F) {
	f.Add([]byte("9222\n/devtools/browser/1b2c\n"))
	f.Add([]byte("9222\r\n/devtools/browser/x"))
	f.Add([]byte("\n\n"))
	f.Add([]byte("12ab\n/devtools/browser/x"))
	f.Add([]byte("1\n/devtools/page/x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := parseActivePort(data)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u, "ws://127.0.0.1:") || !strings.Contains(u, "/devtools/browser/") {
			t.Fatalf("bad URL %q from %q", u, data)
		}
	})
}
