package capnweb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// refSource resolves the IDs that appear inside expressions.
type refSource interface {
	// ref returns the shared future of something the peer named by our ID
	// ("import", "pipeline", "remap" and import captures).
	ref(id int64) (*future, error)
	// peer takes a reference to something the peer introduced ("export"
	// yields an owned *Stub, "promise" an owned *future).
	peer(id int64, promise bool) (any, error)
}

// evaluator turns a parsed wire expression into a value tree. Calls it
// meets start at once (references are captured at receive time, as the
// protocol requires); their results appear in the tree as placeholders and
// pending is set.
type evaluator struct {
	s       *Session
	src     refSource
	pending bool
	// onReader is set when the session's reader evaluates a frame: calls
	// may then be left for the reader to run itself (see Session.start).
	onReader bool
	// t pays for what the evaluation builds and copies, and for the
	// calls it starts (budget.go); its owner releases it.
	t *tally
}

func (e *evaluator) eval(v any, depth int) (any, error) {
	if depth >= e.s.opts.maxDepth() {
		return nil, limitErrorf("message nesting depth exceeds %d", e.s.opts.maxDepth()-1)
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return parseNumber(x)
	case *Object:
		// Keys that exist on Object.prototype, and toJSON, are dropped after
		// their value is evaluated, as JavaScript does: that keeps the
		// peer's references counted, and a script that forwards JSON.parse
		// of a page keeps its session. A new object is built: map
		// instructions are evaluated once per element.
		n := int64(objectBytes)
		for _, k := range x.keys {
			n += 2*slotBytes + int64(len(k))
		}
		if err := e.t.take(n, "an object"); err != nil {
			return nil, err
		}
		out := &Object{keys: make([]string, 0, len(x.keys)), vals: make([]any, 0, len(x.keys)), nidx: x.nidx}
		for i, k := range x.keys {
			ev, err := e.eval(x.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			if reservedKeys[k] {
				e.s.releaseTree(ev)
				continue
			}
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, ev)
		}
		out.indexKeys() // it may be shared once settled: lookups must only read
		return out, nil
	case []any:
		if len(x) == 1 {
			if inner, ok := x[0].([]any); ok {
				return e.evalList(inner, depth)
			}
		}
		if len(x) > 0 {
			if tag, ok := x[0].(string); ok {
				if out, ok, err := e.special(tag, x, depth); ok || err != nil {
					return out, err
				}
			}
		}
		return nil, typeErrorf("unknown special value: %s", compact(x))
	}
	return nil, protoErrorf("unexpected JSON value %T", v)
}

// evalList evaluates the elements of an escaped array (or call arguments).
func (e *evaluator) evalList(x []any, depth int) ([]any, error) {
	if err := e.t.take(sliceBytes+slotBytes*int64(len(x)), "an array"); err != nil {
		return nil, err
	}
	out := make([]any, len(x))
	for i, el := range x {
		ev, err := e.eval(el, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}

func parseNumber(n json.Number) (any, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		// JSON.parse turns out-of-range numbers into ±Infinity (or 0).
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, nil
		}
		return nil, protoErrorf("bad number %q", string(n))
	}
	return f, nil
}

// special evaluates a tagged form. ok is false for an unknown shape.
func (e *evaluator) special(tag string, x []any, depth int) (any, bool, error) {
	switch tag {
	case "undefined":
		if len(x) == 1 {
			return Undefined{}, true, nil
		}
	case "inf":
		if len(x) == 1 {
			return math.Inf(1), true, nil
		}
	case "-inf":
		if len(x) == 1 {
			return math.Inf(-1), true, nil
		}
	case "nan":
		if len(x) == 1 {
			return math.NaN(), true, nil
		}
	case "bigint":
		if len(x) != 2 {
			break
		}
		str, ok := x[1].(string)
		if !ok {
			break
		}
		digits := strings.TrimPrefix(str, "-")
		if len(digits) > e.s.opts.maxBigDigits() {
			return nil, false, limitErrorf("bigint of %d digits exceeds the limit of %d", len(digits), e.s.opts.maxBigDigits())
		}
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return nil, false, protoErrorf("bad bigint %q", str)
		}
		b, _ := new(big.Int).SetString(str, 10)
		return b, true, nil
	case "date":
		if len(x) != 2 {
			break
		}
		if x[1] == nil {
			return InvalidDate{}, true, nil
		}
		n, ok := x[1].(json.Number)
		if !ok {
			break
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.Abs(f) > 8.64e15 {
			return InvalidDate{}, true, nil
		}
		ms := math.Trunc(f)
		return time.UnixMilli(int64(ms)).UTC(), true, nil
	case "bytes":
		if len(x) != 2 && len(x) != 3 {
			break
		}
		str, ok := x[1].(string)
		if !ok {
			break
		}
		if err := e.t.take(sliceBytes+int64(len(str)), "bytes"); err != nil {
			return nil, false, err
		}
		data, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(str, "="))
		if err != nil {
			return nil, false, protoErrorf("bad base64 in bytes: %v", err)
		}
		if len(x) == 2 {
			return data, true, nil
		}
		typ, ok := x[2].(string)
		if !ok || !byteTypes[typ] {
			return nil, false, protoErrorf("unknown byte container %s", compact(x[2]))
		}
		if typ == "Uint8Array" {
			return data, true, nil
		}
		return TypedBytes{Type: typ, Data: data}, true, nil
	case "error":
		return e.errorForm(x, depth)
	case "url":
		if len(x) != 2 {
			break
		}
		str, ok := x[1].(string)
		if !ok {
			break
		}
		u, err := url.Parse(str)
		if err != nil {
			return nil, false, protoErrorf("bad url: %v", err)
		}
		return u, true, nil
	case "headers":
		if len(x) != 2 {
			break
		}
		pairs, ok := x[1].([]any)
		if !ok {
			break
		}
		h := make(Headers, 0, len(pairs))
		for _, p := range pairs {
			pa, ok := p.([]any)
			if !ok || len(pa) != 2 {
				return nil, false, protoErrorf("bad headers entry %s", compact(p))
			}
			k, ok1 := pa[0].(string)
			v, ok2 := pa[1].(string)
			if !ok1 || !ok2 {
				return nil, false, protoErrorf("bad headers entry %s", compact(p))
			}
			h = append(h, [2]string{k, v})
		}
		return h, true, nil
	case "export", "promise":
		if len(x) != 2 {
			break
		}
		id, ok := wireID(x[1])
		if !ok {
			break
		}
		if err := e.t.take(entryCost, "a stub"); err != nil {
			return nil, false, err
		}
		v, err := e.src.peer(id, tag == "promise")
		if err != nil {
			return nil, false, err
		}
		if _, isFut := v.(*future); isFut {
			e.pending = true
		}
		return v, true, nil
	case "import", "pipeline":
		return e.refForm(x, depth)
	case "remap":
		return e.remapForm(x)
	case "writable", "readable", "request", "response", "blob":
		return nil, false, fmt.Errorf("%w: %q values (streams) are not supported by this peer", ErrUnsupported, tag)
	}
	return nil, false, nil
}

// errorForm evaluates ["error", name, message, stack?, props?].
func (e *evaluator) errorForm(x []any, depth int) (any, bool, error) {
	if len(x) < 3 || len(x) > 5 {
		return nil, false, nil
	}
	name, ok1 := x[1].(string)
	msg, ok2 := x[2].(string)
	if !ok1 || !ok2 {
		return nil, false, nil
	}
	re := &RemoteError{Name: name, Message: msg, IsError: true}
	if len(x) >= 4 {
		if st, ok := x[3].(string); ok {
			re.Stack = st
		}
	}
	if len(x) == 5 {
		props, ok := x[4].(*Object)
		if !ok {
			return nil, false, nil
		}
		ev, err := e.eval(props, depth+1)
		if err != nil {
			return nil, false, err
		}
		re.Props = map[string]any{}
		for k, v := range ev.(*Object).All() {
			if k == "name" || k == "message" || k == "stack" {
				e.s.releaseTree(v) // JavaScript keeps its own
				continue
			}
			re.Props[k] = v
		}
	}
	return re, true, nil
}

// refForm evaluates ["import" or "pipeline", id, path?, args?]: a
// reference to an earlier result, or a call on it when args are given.
func (e *evaluator) refForm(x []any, depth int) (any, bool, error) {
	if len(x) < 2 || len(x) > 4 {
		return nil, false, nil
	}
	id, ok := wireID(x[1])
	if !ok {
		return nil, false, nil
	}
	var path []string
	if len(x) >= 3 {
		if path, ok = wirePath(x[2]); !ok {
			return nil, false, nil
		}
	}
	fut, err := e.src.ref(id)
	if err != nil {
		return nil, false, err
	}
	if len(x) < 4 {
		r := e.s.capture(fut, path, e.t, depth)
		if isLimit(r.err) {
			return nil, false, r.err
		}
		if r.f == nil && r.err == nil && len(r.path) == 0 {
			r.taken.Store(true)
			return r.val, true, nil // held already: no placeholder needed
		}
		e.pending = true
		return r, true, nil
	}
	e.pending = true
	rawArgs, ok := x[3].([]any)
	if !ok {
		return nil, false, nil
	}
	args, err := e.evalList(rawArgs, depth)
	if err != nil {
		return nil, false, err
	}
	f, err := e.s.startCall(fut, path, args, e.onReader, e.t)
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}

// remapForm evaluates ["remap", id, path, captures, instructions]: a
// .map() over an earlier result.
func (e *evaluator) remapForm(x []any) (any, bool, error) {
	if len(x) != 5 {
		return nil, false, nil
	}
	id, ok := wireID(x[1])
	path, ok2 := wirePath(x[2])
	caps, ok3 := x[3].([]any)
	instrs, ok4 := x[4].([]any)
	if !ok || !ok2 || !ok3 || !ok4 {
		return nil, false, nil
	}
	fut, err := e.src.ref(id)
	if err != nil {
		return nil, false, err
	}
	if err := e.t.take(sliceBytes+refBytes*int64(len(caps)), "map captures"); err != nil {
		return nil, false, err
	}
	captures := make([]*future, len(caps))
	for i, c := range caps {
		ca, ok := c.([]any)
		var cid int64
		if ok && len(ca) == 2 {
			cid, ok = wireID(ca[1])
		}
		tagc := ""
		if ok && len(ca) == 2 {
			tagc, _ = ca[0].(string)
		}
		switch {
		case ok && tagc == "import":
			f, err := e.src.ref(cid)
			if err != nil {
				return nil, false, err
			}
			captures[i] = f
		case ok && tagc == "export":
			st, err := e.src.peer(cid, false)
			if err != nil {
				return nil, false, err
			}
			captures[i] = settledFuture(st, nil)
		default:
			return nil, false, protoErrorf("unknown map capture: %s", compact(c))
		}
	}
	e.pending = true
	return e.s.startRemap(fut, path, captures, instrs, e.t), true, nil
}

// wirePath converts a property path; numbers become their decimal text.
func wirePath(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(arr))
	for i, p := range arr {
		switch p := p.(type) {
		case string:
			out[i] = p
		case json.Number:
			f, err := strconv.ParseFloat(string(p), 64)
			if err != nil {
				return nil, false
			}
			out[i] = string(appendNumberForText(nil, f))
		default:
			return nil, false
		}
	}
	return out, true
}

// compact renders a parsed JSON value for an error message, like
// JSON.stringify, truncated.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// ref implements refSource for messages from the peer.
func (s *Session) ref(id int64) (*future, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.exports[id]
	if e == nil {
		return nil, protoErrorf("no such entry on exports table: %d", id)
	}
	return e.fut, nil
}

// peer implements refSource for messages from the peer.
func (s *Session) peer(id int64, promise bool) (any, error) {
	if id >= 0 {
		return nil, protoErrorf("export ID %d must be negative", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	imp := s.imports[id]
	if promise {
		if imp != nil {
			return nil, protoErrorf("promise ID %d is already in use", id)
		}
		imp = &importEntry{id: id, intro: 1, fut: newFuture(), inTable: true}
		s.imports[id] = imp
		return imp.fut, nil
	}
	if imp != nil {
		if imp.fut != nil {
			return nil, protoErrorf("export ID %d is already in use by a promise", id)
		}
		imp.intro++
		imp.handles++
		return &Stub{sess: s, imp: imp}, nil
	}
	imp = &importEntry{id: id, intro: 1, handles: 1, inTable: true}
	s.imports[id] = imp
	return &Stub{sess: s, imp: imp}, nil
}
