package capnweb

import (
	"fmt"
	"math"
	"math/big"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// StrictArgs is implemented by an exported object whose methods take their
// arguments strictly, as an API whose callers must not be misunderstood
// wants: an object with a key its struct type does not name is refused
// rather than the key dropped, and every refusal is a [*DecodeError]
// naming where in the argument the value sits. Undefined and null count
// as absent, at any depth: the field, element or map entry keeps its zero
// value.
//
// ArgError words the refusal for the peer: it returns the error the call
// rejects with when err refused an argument of method (its name as the
// peer calls it). A nil result rejects with a plain TypeError saying err,
// with err's fields as its properties ([DecodeError.Props]).
// ArgError is not callable by the peer.
type StrictArgs interface {
	ArgError(method string, err *DecodeError) error
}

var strictArgsType = reflect.TypeFor[StrictArgs]()

// DecodeError is a value refused by strict decoding (see [StrictArgs] and
// [Decode]).
type DecodeError struct {
	// Arg is the argument refused, from 1; 0 for a value given to Decode.
	Arg int
	// Type is the Go type the argument (or Decode's value) decodes into.
	Type reflect.Type
	// Path is where in the argument the refused value is: "" for the
	// argument itself, else its keys and indexes (".target.label",
	// ".modifiers[1]").
	Path string
	// In is the innermost struct type on the way to the refused value,
	// the value's own type included; nil when there is none.
	In reflect.Type
	// Key, when set, is a key of the object at Path that its type does
	// not name, and Takes the keys it does name, in order.
	Key   string
	Takes []string
	// Want and Got, when Key is not set, say what the value at Path had
	// to be and what it is, as a script would: "a number", "a string".
	// Got is "a function" for a function (a stub).
	Want, Got string
}

// Message words the error with the argument called root: Message("options")
// is "options.timeout must be a number, not a string" or `unknown key
// "wait" in options (it takes waitUntil, timeout)`.
func (e *DecodeError) Message(root string) string {
	if e.Key != "" {
		return fmt.Sprintf("unknown key %q in %s (it takes %s)", e.Key, root+e.Path, strings.Join(e.Takes, ", "))
	}
	return fmt.Sprintf("%s must be %s, not %s", root+e.Path, e.Want, e.Got)
}

// Closest is the key of Takes nearest to Key by edits, ignoring case
// (insertions, deletions, substitutions and swaps of two neighbours each
// cost one), or "" when Key is not set or no key is near: a key more than
// half rewritten is no typo of it.
func (e *DecodeError) Closest() string {
	if e.Key == "" {
		return ""
	}
	// Measured before anything is made of it: a key is the peer's, and
	// can be megabytes (more than maxTypo*UTFMax bytes is more than
	// maxTypo characters). Lower-casing keeps the count of characters.
	if len(e.Key) > maxTypo*utf8.UTFMax || utf8.RuneCountInString(e.Key) > maxTypo {
		return "" // no typo of a key; and the cost stays bounded
	}
	k := []rune(strings.ToLower(e.Key))
	best, bestD := "", maxTypo+1
	for _, t := range e.Takes {
		if d := editDistance(k, []rune(strings.ToLower(t))); d < bestD {
			best, bestD = t, d
		}
	}
	if best == "" || bestD > max(1, len([]rune(best))/2) {
		return ""
	}
	return best
}

// maxTypo bounds the keys Closest compares: longer ones are no typo.
const maxTypo = 64

// editDistance is the optimal-string-alignment distance of a and b.
func editDistance(a, b []rune) int {
	if len(b) > maxTypo {
		return maxTypo + 1
	}
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Props is the refusal as an error's properties, for the peer to read
// rather than parse the message: argument (from 1; left out for Decode's
// value), path, and either key, takes and closest (when near) or want and
// got. Takes is a copy, the type's own keys.
func (e *DecodeError) Props() map[string]any {
	p := map[string]any{"path": e.Path}
	if e.Arg > 0 {
		p["argument"] = e.Arg
	}
	if e.Key == "" {
		p["want"], p["got"] = e.Want, e.Got
		return p
	}
	p["key"], p["takes"] = e.Key, slices.Clone(e.Takes)
	if c := e.Closest(); c != "" {
		p["closest"] = c
	}
	return p
}

func (e *DecodeError) Error() string {
	root := "value"
	if e.Arg > 0 {
		root = fmt.Sprintf("argument %d", e.Arg)
	}
	return "capnweb: " + e.Message(root)
}

// Decode stores v, a value received from the peer, into *dst strictly, as
// a [StrictArgs] method's argument is decoded: for a value whose type is
// known only once it is looked at (a union, which a parameter of type
// [Value] receives). It returns a *DecodeError; dst must be a non-nil
// pointer.
func Decode(v Value, dst any) error {
	p := reflect.ValueOf(dst)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return fmt.Errorf("%w: Decode needs a non-nil pointer, not %T", ErrUnsupported, dst)
	}
	return decodeStrict(p.Elem(), v, 0, true)
}

// decodeStrict stores the canonical value a into v for argument arg (from
// 1; 0 for Decode), refusing with a *DecodeError what assign would let
// through or word without a path.
func decodeStrict(v reflect.Value, a any, arg int, ordered bool) error {
	d := strictDecoder{ordered: ordered}
	if err := d.value(v, a, "", nil, 0); err != nil {
		err.Arg, err.Type = arg, v.Type()
		return err
	}
	return nil
}

type strictDecoder struct{ ordered bool }

// value stores a into v; path is where v is in the argument and in the
// innermost struct type holding it.
func (d strictDecoder) value(v reflect.Value, a any, path string, in reflect.Type, depth int) *DecodeError {
	if a == nil || a == (Undefined{}) {
		return nil // absent: the zero value
	}
	t := v.Type()
	refuse := func(want string) *DecodeError {
		return &DecodeError{Path: path, In: in, Want: want, Got: KindOf(a)}
	}
	if depth > 512 {
		return refuse("nested at most 512 deep")
	}
	if laxType(t) {
		if err := assign(v, a, depth, d.ordered); err != nil {
			return refuse("a " + t.String())
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := d.value(p.Elem(), a, path, in, depth+1); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.String:
		s, ok := a.(string)
		if !ok {
			return refuse("a string")
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := a.(bool)
		if !ok {
			return refuse("true or false")
		}
		v.SetBool(b)
		return nil
	case reflect.Float32, reflect.Float64:
		f, ok := a.(float64)
		if !ok {
			return refuse("a number")
		}
		v.SetFloat(f)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := a.(float64)
		if !ok || !wholeNumber(f) || v.OverflowInt(int64(f)) {
			return refuse("a whole number")
		}
		v.SetInt(int64(f))
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f, ok := a.(float64)
		if !ok || !wholeNumber(f) || f < 0 || v.OverflowUint(uint64(f)) {
			return refuse("a whole number, not negative")
		}
		v.SetUint(uint64(f))
		return nil
	case reflect.Slice, reflect.Array:
		return d.list(v, a, path, in, depth)
	case reflect.Map:
		return d.object(v, a, path, in, depth)
	case reflect.Struct:
		return d.fields(v, a, path, depth)
	}
	return refuse("a " + t.String()) // a channel, a func: nothing the peer sends fits
}

// list is value for a slice or array.
func (d strictDecoder) list(v reflect.Value, a any, path string, in reflect.Type, depth int) *DecodeError {
	t := v.Type()
	arr, ok := a.([]any)
	if !ok {
		return &DecodeError{Path: path, In: in, Want: "a list", Got: KindOf(a)}
	}
	if t.Kind() == reflect.Array {
		if len(arr) != t.Len() {
			return &DecodeError{Path: path, In: in, Want: fmt.Sprintf("a list of %d", t.Len()), Got: fmt.Sprintf("a list of %d", len(arr))}
		}
	} else {
		v.Set(reflect.MakeSlice(t, len(arr), len(arr)))
	}
	for i, e := range arr {
		if err := d.value(v.Index(i), e, fmt.Sprintf("%s[%d]", path, i), in, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// object is value for a map with string keys.
func (d strictDecoder) object(v reflect.Value, a any, path string, in reflect.Type, depth int) *DecodeError {
	t := v.Type()
	o, ok := sortedMembers(a)
	if !ok || t.Key().Kind() != reflect.String {
		return &DecodeError{Path: path, In: in, Want: "an object", Got: KindOf(a)}
	}
	m := reflect.MakeMapWithSize(t, 0)
	for k, e := range o {
		if e == nil || e == (Undefined{}) {
			continue
		}
		ev := reflect.New(t.Elem()).Elem()
		if err := d.value(ev, e, path+"."+k, in, depth+1); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
	}
	v.Set(m)
	return nil
}

// fields is value for a struct: every member must name a field, and
// errors below name the struct as the innermost one.
func (d strictDecoder) fields(v reflect.Value, a any, path string, depth int) *DecodeError {
	t := v.Type()
	in := t
	o, ok := sortedMembers(a)
	if !ok {
		return &DecodeError{Path: path, In: in, Want: "an object", Got: KindOf(a)}
	}
	keys := keysOf(t)
	for k, e := range o {
		if e == nil || e == (Undefined{}) {
			continue
		}
		i := slices.IndexFunc(keys, func(f structKey) bool { return f.name == k })
		if i < 0 {
			takes := make([]string, len(keys))
			for j, f := range keys {
				takes[j] = f.name
			}
			return &DecodeError{Path: path, In: in, Key: k, Takes: takes}
		}
		if err := d.value(fieldAlloc(v, keys[i].index), e, path+"."+k, in, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// laxType reports whether values of t are decoded as assign does: those
// that are not plain data the strict rules speak about (an interface,
// bytes, a bigint, a URL, a Date, an Object), where a value either fits
// or not and has no keys to refuse.
func laxType(t reflect.Type) bool {
	switch t {
	case bigIntType, urlType, objectType, timeType:
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	case reflect.Pointer:
		return t.Elem() == bigIntType || t.Elem() == urlType
	}
	return false
}

var timeType = reflect.TypeFor[time.Time]()

// wholeNumber reports whether f is an integer a JavaScript number holds
// exactly.
func wholeNumber(f float64) bool {
	return f == math.Trunc(f) && !math.IsInf(f, 0) && math.Abs(f) <= 1<<53
}

// sortedMembers yields the members of an object value: an *Object in its
// order, a map with its keys sorted, so that the first bad key named is
// always the same one.
func sortedMembers(a any) (func(yield func(string, any) bool), bool) {
	switch x := a.(type) {
	case *Object:
		return x.All(), true
	case map[string]any:
		return func(yield func(string, any) bool) {
			for _, k := range sortedKeys(x) {
				if !yield(k, x[k]) {
					return
				}
			}
		}, true
	}
	return nil, false
}

// structKey is one key of a struct type as the peer names it: its wire
// name (see fieldName) and the field that holds it.
type structKey struct {
	name  string
	index []int
}

var structKeys sync.Map // reflect.Type -> []structKey

// keysOf lists the keys of struct type t in declaration order, those of
// embedded structs included, as lowerReflect sends them.
func keysOf(t reflect.Type) []structKey {
	if ks, ok := structKeys.Load(t); ok {
		return ks.([]structKey)
	}
	var out []structKey
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, skip := fieldName(f)
		if skip {
			continue
		}
		out = append(out, structKey{name: name, index: f.Index})
	}
	structKeys.Store(t, out)
	return out
}

// fieldAlloc is v.FieldByIndex(index), allocating the embedded struct
// pointers on the way.
func fieldAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// KindOf names the kind of a value received from the peer as a script
// would: "a string", "a number", "an object", "a function" (a stub).
func KindOf(a Value) string {
	switch a.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case *Object, map[string]any:
		return "an object"
	case []byte, TypedBytes:
		return "bytes"
	case *big.Int:
		return "a bigint"
	case time.Time, InvalidDate:
		return "a Date"
	case *Stub:
		return "a function"
	case *RemoteError:
		return "an Error"
	case *url.URL:
		return "a URL"
	case Headers:
		return "Headers"
	case *localObj:
		return "an object of this side's"
	}
	return "a " + jsType(a)
}
