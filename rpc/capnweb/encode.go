package capnweb

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// encode appends the wire form of the canonical tree v. Objects passed by
// reference get a fresh export ID each time they are written, as the
// JavaScript peer expects. s.mu must be held.
func (s *Session) encode(b []byte, v any, depth int) ([]byte, error) {
	if depth >= s.opts.maxDepth() {
		return b, limitErrorf("value nesting depth exceeds %d", s.opts.maxDepth()-1)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case Undefined:
		return append(b, `["undefined"]`...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		switch {
		case math.IsNaN(x):
			return append(b, `["nan"]`...), nil
		case math.IsInf(x, 1):
			return append(b, `["inf"]`...), nil
		case math.IsInf(x, -1):
			return append(b, `["-inf"]`...), nil
		}
		return appendJSNumber(b, x), nil
	case string:
		return appendJSString(b, x), nil
	case *big.Int:
		b = append(b, `["bigint","`...)
		b = x.Append(b, 10)
		return append(b, `"]`...), nil
	case time.Time:
		b = append(b, `["date",`...)
		b = appendJSNumber(b, float64(x.UnixMilli()))
		return append(b, ']'), nil
	case InvalidDate:
		return append(b, `["date",null]`...), nil
	case []byte:
		b = append(b, `["bytes","`...)
		b = base64.RawStdEncoding.AppendEncode(b, x)
		return append(b, `"]`...), nil
	case TypedBytes:
		b = append(b, `["bytes","`...)
		b = base64.RawStdEncoding.AppendEncode(b, x.Data)
		b = append(b, `",`...)
		b = appendJSString(b, x.Type)
		return append(b, ']'), nil
	case *url.URL:
		b = append(b, `["url",`...)
		b = appendJSString(b, x.String())
		return append(b, ']'), nil
	case Headers:
		return appendHeaders(b, x), nil
	case *RemoteError:
		return s.encodeError(b, x, depth)
	case []any:
		b = append(b, "[["...)
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = s.encode(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, "]]"...), nil
	case *Object:
		return s.encodeOrdered(b, x, depth)
	case map[string]any:
		return s.encodeObject(b, x, depth)
	case *localObj:
		id := s.nextExport
		s.nextExport--
		s.hold(x)
		s.exports[id] = &exportEntry{refs: 1, fut: settledFuture(x, nil)}
		b = append(b, `["export",`...)
		b = strconv.AppendInt(b, id, 10)
		return append(b, ']'), nil
	case *Stub:
		return s.encodeStub(b, x, depth)
	case MapValue:
		b = append(b, `["pipeline",`...)
		b = strconv.AppendInt(b, x.id, 10)
		return append(b, ']'), nil
	}
	return b, fmt.Errorf("%w: cannot encode %T", ErrUnsupported, v)
}

// appendHeaders writes a Headers value as ["headers", [[name, value]…]].
func appendHeaders(b []byte, x Headers) []byte {
	b = append(b, `["headers",[`...)
	for i, h := range x {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendJSString(b, h[0])
		b = append(b, ',')
		b = appendJSString(b, h[1])
		b = append(b, ']')
	}
	return append(b, "]]"...)
}

// encodeError writes x as an error expression, or its value when x only
// wraps a thrown non-error.
func (s *Session) encodeError(b []byte, x *RemoteError, depth int) ([]byte, error) {
	if !x.IsError {
		return s.encode(b, x.Value, depth)
	}
	name := x.Name
	if name == "" {
		name = NameError
	}
	b = append(b, `["error",`...)
	b = appendJSString(b, name)
	b = append(b, ',')
	b = appendJSString(b, x.Message)
	if len(x.Props) > 0 {
		b = append(b, ",null,"...)
		var err error
		if b, err = s.encodeObject(b, x.Props, depth+1); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// encodeOrdered writes x's members in its own key order, leaving out the
// keys a peer must never see.
func (s *Session) encodeOrdered(b []byte, x *Object, depth int) ([]byte, error) {
	b = append(b, '{')
	first := true
	for i, k := range x.keys {
		if reservedKeys[k] {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSString(b, k)
		b = append(b, ':')
		var err error
		if b, err = s.encode(b, x.vals[i], depth+1); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func (s *Session) encodeObject(b []byte, m map[string]any, depth int) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !reservedKeys[k] { // JavaScript would drop them
			keys = append(keys, k)
		}
	}
	// Go maps have no order; sorted keys keep frames reproducible.
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, k)
		b = append(b, ':')
		var err error
		if b, err = s.encode(b, m[k], depth+1); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// encodeStub writes a reference to something of the peer's: its own
// export ID, a pipeline on a pending push, or the value a settled promise
// resolved to.
func (s *Session) encodeStub(b []byte, st *Stub, depth int) ([]byte, error) {
	if st.released.Load() {
		return b, ErrReleased
	}
	imp := st.imp
	if imp.inTable {
		if imp.fut != nil {
			b = append(b, `["pipeline",`...)
		} else {
			b = append(b, `["import",`...)
		}
		b = strconv.AppendInt(b, imp.id, 10)
		return append(b, ']'), nil
	}
	if imp.fut != nil && imp.fut.isSettled() {
		if imp.fut.err != nil {
			return b, imp.fut.err
		}
		return s.encode(b, imp.fut.val, depth)
	}
	return b, fmt.Errorf("%w: the stub's import is gone", ErrClosed)
}
