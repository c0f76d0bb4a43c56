package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendCall(t *testing.T) {
	for _, c := range []struct {
		session, method string
		params          []byte
		want            string
	}{
		{"", "Browser.getVersion", nil, `{"id":3,"method":"Browser.getVersion"}`},
		{"AB12", "Runtime.evaluate", []byte(`{"expression":"1"}`), `{"id":3,"sessionId":"AB12","method":"Runtime.evaluate","params":{"expression":"1"}}`},
		{"AB12", "odd\"name", []byte(`{}`), `{"id":3,"sessionId":"AB12","method":"odd\"name","params":{}}`},
	} {
		got := string(AppendCall([]byte("keep"), 3, c.session, c.method, c.params))
		if got != "keep"+c.want {
			t.Errorf("AppendCall(%q, %q) = %s, want %s", c.session, c.method, got, c.want)
		}
		if !json.Valid([]byte(c.want)) {
			t.Errorf("%s is not JSON", c.want)
		}
		if id, ok := LeadingID([]byte(c.want)); !ok || id != 3 {
			t.Errorf("LeadingID(%s) = %d, %v", c.want, id, ok)
		}
		if s, ok := SessionIDOf([]byte(c.want)); !ok || s != c.session {
			t.Errorf("SessionIDOf(%s) = %q, %v", c.want, s, ok)
		}
	}
}

func TestLeadingID(t *testing.T) {
	for in, want := range map[string]int64{
		`{"id":12,"result":{}}`: 12, `{"id":1073741825}`: 1073741825,
		`{"id":,"x":1}`: -1, `{"id":12x}`: -1, `{"method":"X"}`: -1, `{"id":12`: -1, ` {"id":1}`: -1,
		`{"id":` + strings.Repeat("9", 21) + `}`: -1,
	} {
		id, ok := LeadingID([]byte(in))
		if want < 0 && ok || want >= 0 && (!ok || id != uint64(want)) {
			t.Errorf("LeadingID(%s) = %d, %v; want %d", in, id, ok, want)
		}
	}
}

func TestErrorReply(t *testing.T) {
	b := ErrorReply(9, `too "big"`)
	var r struct {
		ID    uint64 `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.ID != 9 || r.Error.Code != -32000 || r.Error.Message != `too "big"` {
		t.Fatalf("ErrorReply = %s (%v)", b, err)
	}
}

// FuzzSessionIDOf checks the fast tail scan against a full decode: for any
// frame the browser could send, both must agree on the session.
func FuzzSessionIDOf(f *testing.F) {
	f.Add([]byte(`{"id":1,"result":{},"sessionId":"ABC"}`))
	f.Add([]byte(`{"method":"Target.attachedToTarget","params":{"sessionId":"X"}}`))
	f.Add([]byte(`{"method":"Runtime.consoleAPICalled","params":{"s":",\"sessionId\":\"evil\"}"},"sessionId":"real"}`))
	f.Add([]byte(`{"id":2,"result":{"v":"a\",\"sessionId\":\"Z"}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, ok := SessionIDOf(data)
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
			t.Fatalf("SessionIDOf(%q) = %q, %v; full decode says %q", data, id, ok, probe.SessionID)
		}
	})
}

func TestLeadingMethod(t *testing.T) {
	for in, want := range map[string]string{
		`{"method":"Runtime.consoleAPICalled","params":{"type":"log"`: "Runtime.consoleAPICalled",
		`{"method":"Page.frameNavigated"}`:                            "Page.frameNavigated",
		`{"id":3,"method":"x"}`:                                       "",
		`{"method":"Runtime.consoleAP`:                                "",
		`{"method":""}`:                                               "",
	} {
		got, ok := LeadingMethod([]byte(in))
		if string(got) != want || ok != (want != "") {
			t.Errorf("LeadingMethod(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
