package capnweb

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"reflect"
	"sort"
	"strconv"
)

// Object is a JavaScript plain object: string keys and their values, in
// JavaScript's property order. That order is what Object.keys, for…in and
// JSON.stringify show: keys that are array indexes ("0", "1", …) first, in
// numeric order, then the other keys in the order they were first set.
// Setting a key again keeps its place.
//
// Objects received from the peer are *Object wherever order is asked for
// (see [Value]); a Go method returns one to send keys in its order, where a
// map's keys go out sorted. The zero value is an empty object ready to use.
// An Object is not safe for concurrent mutation.
type Object struct {
	keys  []string
	vals  []any
	nidx  int            // leading keys that are array indexes
	index map[string]int // key → position, built for large objects
}

// indexAbove is the size from which lookups use a map, not a scan.
const indexAbove = 8

// NewObject returns an object holding the given key/value pairs in order:
// NewObject("b", 1, "a", 2). It panics when a key is not a string or a
// value is missing, as a composite literal would not compile.
func NewObject(pairs ...any) *Object {
	if len(pairs)%2 != 0 {
		panic("capnweb: NewObject needs key/value pairs")
	}
	o := &Object{keys: make([]string, 0, len(pairs)/2), vals: make([]any, 0, len(pairs)/2)}
	for i := 0; i < len(pairs); i += 2 {
		k, ok := pairs[i].(string)
		if !ok {
			panic(fmt.Sprintf("capnweb: NewObject key %d is %T, not a string", i/2, pairs[i]))
		}
		o.Set(k, pairs[i+1])
	}
	return o
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Keys returns the keys in order. The slice is a copy.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return append([]string(nil), o.keys...)
}

// All yields the keys and values in order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		if o == nil {
			return
		}
		for i, k := range o.keys {
			if !yield(k, o.vals[i]) {
				return
			}
		}
	}
}

// find returns k's position, or -1. It builds the index of a large
// object first: it is for code that changes the object, which nobody else
// reads meanwhile.
func (o *Object) find(k string) int {
	if o == nil {
		return -1
	}
	o.indexKeys()
	return o.lookup(k)
}

// indexKeys builds the index of a large object that has none. The session
// calls it on the objects it builds before anyone else can see them, so
// that later lookups, from any goroutine, only read.
func (o *Object) indexKeys() {
	if len(o.keys) > indexAbove && o.index == nil {
		o.index = make(map[string]int, len(o.keys))
		for i, k := range o.keys {
			o.index[k] = i
		}
	}
}

// lookup is find without writing to o, safe for concurrent readers.
func (o *Object) lookup(k string) int {
	if o == nil {
		return -1
	}
	if o.index != nil {
		if i, ok := o.index[k]; ok {
			return i
		}
		return -1
	}
	for i, x := range o.keys {
		if x == k {
			return i
		}
	}
	return -1
}

// Get returns the value of key k and whether it is set.
func (o *Object) Get(k string) (any, bool) {
	if i := o.lookup(k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Set sets key k to v, keeping k's place if it is already set.
func (o *Object) Set(k string, v any) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	n, isIdx := arrayIndex(k)
	if !isIdx {
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, v)
		if o.index != nil {
			o.index[k] = len(o.keys) - 1
		}
		return
	}
	// Array-index keys come first, in numeric order, as in JavaScript.
	at := sort.Search(o.nidx, func(i int) bool {
		m, _ := arrayIndex(o.keys[i])
		return m > n
	})
	o.keys = append(o.keys, "")
	o.vals = append(o.vals, nil)
	copy(o.keys[at+1:], o.keys[at:])
	copy(o.vals[at+1:], o.vals[at:])
	o.keys[at], o.vals[at] = k, v
	o.nidx++
	o.index = nil
}

// Delete removes key k and reports whether it was set.
func (o *Object) Delete(k string) bool {
	i := o.find(k)
	if i < 0 {
		return false
	}
	if i < o.nidx {
		o.nidx--
	}
	o.keys = append(o.keys[:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i], o.vals[i+1:]...)
	o.index = nil
	return true
}

// Map returns the keys and values as a map, which loses the order.
func (o *Object) Map() map[string]any {
	m := make(map[string]any, o.Len())
	for k, v := range o.All() {
		m[k] = v
	}
	return m
}

// arrayIndex reports whether k is an array index in JavaScript's sense:
// the canonical decimal form of an integer below 2³²−1.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || len(k) > 1 && k[0] == '0' {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < 1<<32-1
}

// objectFromMap builds an Object from a Go map, keys sorted: a Go map has
// no order of its own, and sorted keys keep frames reproducible.
func objectFromMap(m map[string]any) *Object {
	keys := sortedKeys(m)
	o := &Object{keys: make([]string, 0, len(keys)), vals: make([]any, 0, len(keys))}
	for _, k := range keys {
		o.Set(k, m[k])
	}
	return o
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MarshalJSON writes the object as JSON.stringify would, keys in order.
// Values are written as by [DecodeJSON]'s inverse: *Object, []any, maps,
// strings, numbers (NaN and ±Infinity as null), booleans and nil; an
// Undefined member is left out. Other values go through encoding/json.
func (o *Object) MarshalJSON() ([]byte, error) { return appendJSON(nil, o, 0) }

// MarshalJSON writes v as JSON.stringify would, taking the values
// [Object.MarshalJSON] takes: an Undefined member of an object is left
// out, an Undefined element of an array is null.
func MarshalJSON(v any) ([]byte, error) { return appendJSON(nil, v, 0) }

// TypeName names the JavaScript type of v, a value as the session decodes
// them ("undefined", "bigint", "Date", "stub", …), for messages to a peer.
func TypeName(v any) string { return jsType(v) }

// UnmarshalJSON reads a JSON object, keeping its key order; nested objects
// become *Object too and numbers float64, as [DecodeJSON] does.
func (o *Object) UnmarshalJSON(data []byte) error {
	v, err := DecodeJSON(data)
	if err != nil {
		return err
	}
	got, ok := v.(*Object)
	if !ok {
		return fmt.Errorf("%w: JSON value is %s, not an object", ErrUnsupported, jsType(v))
	}
	*o = *got
	return nil
}

// DecodeJSON decodes a JSON document into Go values the way JSON.parse
// does, keeping key order: objects become *Object, arrays []any, numbers
// float64 (out-of-range ones ±Inf), strings, booleans and nil. It is the
// order-keeping counterpart of json.Unmarshal into an any, for values read
// from a page and passed on (a repeated key keeps its first place and its
// last value, as in JavaScript).
func DecodeJSON(data []byte) (any, error) {
	var p jsonParser
	v, err := p.parse(data)
	if err != nil {
		return nil, fmt.Errorf("capnweb: decoding JSON: %w", err)
	}
	return plainNumbers(v), nil
}

// plainNumbers replaces the parser's json.Number leaves by float64.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := parseNumber(x)
		return f
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	case *Object:
		for i, e := range x.vals {
			x.vals[i] = plainNumbers(e)
		}
	}
	return v
}

// appendJSON appends v as JSON.stringify writes it.
func appendJSON(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxJSONNesting {
		return b, fmt.Errorf("%w: value nested more than %d deep", ErrUnsupported, maxJSONNesting)
	}
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendJSString(b, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(b, "null"...), nil
		}
		return appendJSNumber(b, x), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if e == (Undefined{}) {
				e = nil
			}
			if b, err = appendJSON(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case *Object:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		first := true
		for i, k := range x.keys {
			if x.vals[i] == (Undefined{}) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSString(b, k)
			b = append(b, ':')
			if b, err = appendJSON(b, x.vals[i], depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case map[string]any:
		return appendJSON(b, objectFromMap(x), depth)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

// Value, as the type of a Go method's parameter (or an element or field
// type within one), receives a value with its objects as *Object, in the
// peer's key order, at every depth. A parameter of type any receives
// map[string]any instead, which existing Go code type-asserts; see
// [Options.OrderedObjects] to change that for a whole session.
type Value interface{}

var (
	valueType  = reflect.TypeFor[Value]()
	objectType = reflect.TypeFor[Object]()
)
