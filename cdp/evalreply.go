package cdp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/cdp/internal/wire"
)

// The common reply to Runtime.callFunctionOn, read without a full decode.
// Every evaluation, wait and form action takes one, and decoding it into
// the protocol's structs by reflection was the largest single part of the
// host's own work on an evaluation (3 µs in a tight loop, 10-14 µs on a
// script's call, when the process has been idle for the round trip). A
// reply in any other shape gets the full decode.

// replyHead starts a reply that has a result, after its id.
const replyHead = `,"result":{"result":{`

// fastResult reads the result of a call that threw nothing from data, a
// reply frame as Chromium writes it: {"id":n,"result":{"result":{…}}…}.
// It reads the result's type, value, unserializableValue and objectId,
// which are all its callers use; ok is false for a reply of another shape
// (an error, exceptionDetails, a key or string it would have to unescape),
// which the full decode reads instead. data is the caller's own: the
// value is a slice of it.
func fastResult(data []byte) (o runtime.RemoteObject, ok bool) {
	const idKey = `{"id":`
	if !bytes.HasPrefix(data, []byte(idKey)) {
		return o, false
	}
	i := len(idKey)
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	if digits := data[len(idKey):i]; len(digits) == 0 || len(digits) > 1 && digits[0] == '0' || !bytes.HasPrefix(data[i:], []byte(replyHead)) {
		return o, false
	}
	i += len(replyHead) - 1 // at the result's '{'
	end := skipJSON(data, i)
	// The result object must close the call's result at once (anything
	// after it, exceptionDetails, is for the full decode), and only the
	// session may follow.
	if end < 0 || !frameTail(data[end:]) {
		return o, false
	}
	obj := data[i:end]
	if !json.Valid(obj) {
		return o, false
	}
	// obj is a valid object: its members are "key":value, one after another.
	for j := 1; j < len(obj)-1; {
		if obj[j] == ',' {
			j++
		}
		key, k := plainString(obj, j)
		if k < 0 || obj[k] != ':' {
			return o, false
		}
		v := k + 1
		next := skipJSON(obj, v)
		if next < 0 {
			return o, false
		}
		val := obj[v:next]
		switch key {
		case "type":
			if o.Type, ok = plainValue(val); !ok {
				return o, false
			}
		case "value":
			o.Value = json.RawMessage(val)
		case "unserializableValue":
			s, ok := plainValue(val)
			if !ok {
				return o, false
			}
			u := runtime.UnserializableValue(s)
			o.UnserializableValue = &u
		case "objectId":
			s, ok := plainValue(val)
			if !ok {
				return o, false
			}
			id := runtime.RemoteObjectID(s)
			o.ObjectID = &id
		default:
			// The full decode matches keys regardless of case.
			for _, k := range [...]string{"type", "value", "unserializableValue", "objectId"} {
				if strings.EqualFold(key, k) {
					return o, false
				}
			}
		}
		j = next
	}
	return o, o.Type != ""
}

// frameTail reports whether tail ends a reply after its result: "}}",
// or "}" and the session's id.
func frameTail(tail []byte) bool {
	if string(tail) == "}}" {
		return true
	}
	const key = `},"sessionId":"`
	id, ok := bytes.CutPrefix(tail, []byte(key))
	if !ok || !bytes.HasSuffix(id, []byte(`"}`)) {
		return false
	}
	return wire.PlainID(id[:len(id)-2])
}

// plainValue is the string val, a JSON string with no escapes; false for
// any other value.
func plainValue(val []byte) (string, bool) {
	s, end := plainString(val, 0)
	return s, end == len(val)
}

// plainString reads the JSON string at data[i], which must be printable
// ASCII with no escapes (as the protocol's keys, types and ids are), and
// returns it and the index past it; -1 for anything else.
func plainString(data []byte, i int) (string, int) {
	if i >= len(data) || data[i] != '"' {
		return "", -1
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return string(data[i+1 : j]), j + 1
		case c == '\\' || c < 0x20 || c > 0x7e:
			return "", -1
		}
	}
	return "", -1
}

// skipJSON returns the index past the JSON value at data[i], or -1 when
// it does not end in data. It checks only what it needs to find the end:
// the value is checked by json.Valid, or not used.
func skipJSON(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := skipJSON(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(data) && data[j] != ',' && data[j] != '}' && data[j] != ']' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
