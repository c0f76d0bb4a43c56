package cdp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replySeeds are replies to Runtime.callFunctionOn as Chromium writes
// them, and some it does not.
var replySeeds = []string{
	`{"id":1000000001,"result":{"result":{"type":"number","value":4,"description":"4"}},"sessionId":"4F1D7C2E9B0A3C5D"}`,
	`{"id":7,"result":{"result":{"type":"object","value":[{"a":1,"b":"x\"}","c":[1,"x"]}]}}}`,
	`{"id":7,"result":{"result":{"type":"string","value":"a\\\"b}\u00e9"}},"sessionId":"S"}`,
	`{"id":7,"result":{"result":{"type":"number","unserializableValue":"-0","description":"-0"}},"sessionId":"S"}`,
	`{"id":7,"result":{"result":{"type":"bigint","unserializableValue":"1n","description":"1n"}}}`,
	`{"id":7,"result":{"result":{"type":"undefined"}},"sessionId":"S"}`,
	`{"id":7,"result":{"result":{"type":"object","subtype":"null","value":null}},"sessionId":"S"}`,
	`{"id":7,"result":{"result":{"type":"function","className":"Function","description":"function () { return \"}\" }","objectId":"-1234.5.6"}},"sessionId":"S"}`,
	`{"id":7,"result":{"result":{"type":"object","subtype":"error","className":"Error","description":"Error: x","objectId":"1.2.3"},"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":0,"columnNumber":9}},"sessionId":"S"}`,
	`{"id":7,"error":{"code":-32000,"message":"Cannot find context with specified id"},"sessionId":"S"}`,
	`{"id":7,"result":{"result":{"ty\u0070e":"number","value":1}}}`,
	`{"id":7,"result":{"result":{"type":"num\u0062er","value":1}}}`,
	`{"id":7,"result":{"result":{}}}`,
	`{"id":7,"result":{"result":{"type":"number","value":1}`,
	`{"id":7,"result":{"result":{"type":"number","value":}}}`,
	`{"id":7,"result":{"result":{"type":"number","value":1} }}`,
	`{"id":7, "result":{"result":{"type":"number","value":1}}}`,
}

// The quick read of a reply agrees with the full decode on every field
// its callers use, or leaves the reply to it.
func TestFastResultAsFullDecode(t *testing.T) {
	quick := 0
	for _, s := range replySeeds {
		if checkFastResult(t, []byte(s)) {
			quick++
		}
	}
	assert.Equal(t, 8, quick, "the replies in Chromium's shape without an exception are read quickly")
}

// checkFastResult compares fastResult with the full decode on data and
// reports whether fastResult read it.
func checkFastResult(t *testing.T, data []byte) bool {
	t.Helper()
	o, ok := fastResult(append([]byte(nil), data...))
	if !ok {
		return false
	}
	var resp struct {
		Result *runtime.CallFunctionOnReply `json:"result"`
	}
	require.NoError(t, json.Unmarshal(data, &resp), "read quickly, yet no JSON: %s", data)
	require.NotNil(t, resp.Result, "%s", data)
	require.Nil(t, resp.Result.ExceptionDetails, "read quickly despite an exception: %s", data)
	want := resp.Result.Result
	assert.Equal(t, want.Type, o.Type, "%s", data)
	assert.Equal(t, want.UnserializableValue, o.UnserializableValue, "%s", data)
	assert.Equal(t, want.ObjectID, o.ObjectID, "%s", data)
	if len(want.Value) == 0 {
		assert.Empty(t, o.Value, "%s", data)
	} else {
		assert.JSONEq(t, string(want.Value), string(o.Value), "%s", data)
	}
	return true
}

func FuzzFastResult(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastResult(t, data)
	})
}

// An exception's texts are the page's to choose: each is cut to its
// bound, saying so, whatever kind of value was thrown.
func TestEvalErrorTextsAreBounded(t *testing.T) {
	big := strings.Repeat("é", 1<<20)
	str := func(s string) *string { return &s }
	sub := "error"
	for name, d := range map[string]*runtime.ExceptionDetails{
		"error": {Exception: &runtime.RemoteObject{Type: "object", Subtype: &sub, ClassName: str(big),
			Description: str(big + ": " + big + "\n    at " + big)}},
		"value":  {Exception: &runtime.RemoteObject{Type: "string", Value: json.RawMessage(`"` + big + `"`)}},
		"text":   {Text: "Uncaught " + big},
		"frames": {Text: "Uncaught x", StackTrace: &runtime.StackTrace{CallFrames: make([]runtime.CallFrame, 5000)}},
	} {
		e := evalErrorOf(d)
		assert.LessOrEqual(t, len(e.Name), maxEvalName, name)
		assert.LessOrEqual(t, len(e.Message), maxEvalMessage, name)
		assert.LessOrEqual(t, len(e.Stack), maxEvalStack, name)
		assert.True(t, utf8.ValidString(e.Name+e.Message+e.Stack), name)
		assert.Contains(t, e.Name+e.Message+e.Stack, " bytes cut]", name)
	}
}
