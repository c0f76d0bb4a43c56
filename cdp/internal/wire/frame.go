package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// SessionIDOf finds the top-level "sessionId" of a frame ("" for the
// browser's own session); false when data is not a JSON object. Chromium
// writes it last, so a look at the tail is usually enough; anything else
// gets a full decode. The tail match is sound: inside a JSON string the
// quotes around the key would be escaped, and the final '}' right after
// the value closes the top-level object.
func SessionIDOf(data []byte) (string, bool) {
	if id, ok := TailSessionID(data); ok {
		return id, true
	}
	var probe struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return "", false
	}
	return probe.SessionID, true
}

// TailSessionID is the fast half of SessionIDOf: the "sessionId" that
// ends the frame, if it has one in plain form. It also reads the kept tail
// of a frame too large to keep whole.
func TailSessionID(data []byte) (string, bool) {
	const key = `,"sessionId":"`
	n := len(data)
	if n > 2 && data[n-1] == '}' && data[n-2] == '"' {
		tail := data[max(0, n-128) : n-2]
		if i := bytes.LastIndex(tail, []byte(key)); i >= 0 {
			if id := tail[i+len(key):]; PlainID(id) {
				return string(id), true
			}
		}
	}
	return "", false
}

// LeadingMethod reads the "method" an event starts with, which Chromium
// writes first, as a part of data (nothing is copied: it runs on every
// message); false when the frame does not start with one (a reply), or its
// head holds only part of it.
func LeadingMethod(data []byte) ([]byte, bool) {
	const prefix = `{"method":"`
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return nil, false
	}
	rest := data[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return nil, false
	}
	return rest[:end], true
}

// LeadingID reads the "id" a reply starts with, which Chromium writes
// first; false when the frame does not start with one.
func LeadingID(data []byte) (uint64, bool) {
	const prefix = `{"id":`
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return 0, false
	}
	var id uint64
	i := len(prefix)
	for ; i < len(data) && data[i] >= '0' && data[i] <= '9' && i < len(prefix)+20; i++ {
		id = id*10 + uint64(data[i]-'0')
	}
	if i == len(prefix) || i >= len(data) || data[i] != ',' && data[i] != '}' {
		return 0, false
	}
	return id, true
}

// PlainID reports whether b is the kind of id Chromium issues (hex, or at
// least plain ASCII word characters), which needs no JSON unescaping.
func PlainID(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return len(b) > 0
}

// AppendCall appends the frame of call id of method to b: on session
// (none when "", the browser's own), with params (already JSON; none when
// nil).
func AppendCall(b []byte, id uint64, session, method string, params []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, id, 10)
	if session != "" {
		b = append(b, `,"sessionId":"`...)
		b = append(b, session...)
		b = append(b, '"')
	}
	b = append(b, `,"method":`...)
	b = strconv.AppendQuote(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// ErrorReply is the frame of a protocol error answering call id, as the
// browser would send it (code -32000, "server error").
func ErrorReply(id uint64, message string) []byte {
	msg, _ := json.Marshal(message) // a string always encodes
	b := make([]byte, 0, 64+len(msg))
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"error":{"code":-32000,"message":`...)
	b = append(b, msg...)
	return append(b, `}}`...)
}
