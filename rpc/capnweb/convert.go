package capnweb

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"reflect"
	"strings"
	"time"
)

// maxSafeInt is the largest integer a JavaScript number holds exactly.
const maxSafeInt = 1<<53 - 1

var (
	bigIntType = reflect.TypeFor[big.Int]()
	urlType    = reflect.TypeFor[url.URL]()
)

// lower converts a Go value into the canonical value tree the encoder
// writes (see value.go). Objects passed by reference become *localObj with
// one hold each; *Stub leaves are duplicated, so the tree owns everything it
// references and must be released with releaseTree.
func (s *Session) lower(v any, depth int) (any, error) { return s.lowerAs(v, depth, nil) }

// lowerAs is lower for a value a Go method returned when tk is the call's
// turn: the result takes over the stubs in it, as a JavaScript method's
// result does, including those the method released while it ran (see
// Stub.Release).
func (s *Session) lowerAs(v any, depth int, tk *ticket) (any, error) {
	if depth >= s.opts.maxDepth() {
		return nil, limitErrorf("value nesting depth exceeds %d (does it contain a cycle?)", s.opts.maxDepth())
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case Undefined, InvalidDate, bool, string, float64:
		return x, nil
	case int:
		return lowerInt(int64(x))
	case int64:
		return lowerInt(x)
	case *big.Int:
		if x == nil {
			return nil, nil
		}
		return new(big.Int).Set(x), nil
	case time.Time:
		return x, nil
	case []byte:
		if x == nil {
			return []byte{}, nil // nil slices go out empty, as every slice does
		}
		return x, nil
	case TypedBytes:
		if !byteTypes[x.Type] {
			return nil, fmt.Errorf("%w: byte container type %q", ErrUnsupported, x.Type)
		}
		return x, nil
	case *url.URL:
		if x == nil {
			return nil, nil
		}
		return x, nil
	case Headers:
		return x, nil
	case *Stub:
		if x == nil {
			return nil, nil
		}
		if x.sess != s {
			return nil, fmt.Errorf("%w: a stub can only be passed back to the session it came from", ErrUnsupported)
		}
		if tk != nil {
			if st := tk.takeStub(x); st != nil {
				return st, nil
			}
		}
		return x.Dup(), nil
	case *localObj:
		s.hold(x)
		return x, nil
	case MapValue:
		return x, nil
	case *RemoteError:
		if x == nil {
			return nil, nil
		}
		return s.lowerRemoteError(x, depth)
	case error:
		return s.lowerError(x, depth), nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			le, err := s.lowerAs(e, depth+1, tk)
			if err != nil {
				s.releaseTree(out[:i])
				return nil, err
			}
			out[i] = le
		}
		return out, nil
	case map[string]any:
		// A Go map has no order: its keys go out sorted, which keeps frames
		// reproducible. Return an *Object to choose the order.
		keys := sortedKeys(x)
		out := &Object{keys: make([]string, 0, len(keys)), vals: make([]any, 0, len(keys))}
		for _, k := range keys {
			if err := s.lowerMember(out, k, x[k], depth, tk); err != nil {
				return nil, err
			}
		}
		return s.checkThen(out)
	case *Object:
		if x == nil {
			return nil, nil
		}
		return s.lowerObject(x, depth, tk)
	case Object:
		return s.lowerObject(&x, depth, tk)
	}
	if o := newLocalObj(v); o != nil {
		o = s.intern(o)
		s.hold(o)
		return o, nil
	}
	return s.lowerReflect(reflect.ValueOf(v), depth, tk)
}

func (s *Session) lowerObject(x *Object, depth int, tk *ticket) (any, error) {
	out := &Object{keys: make([]string, 0, len(x.keys)), vals: make([]any, 0, len(x.keys))}
	for i, k := range x.keys {
		if err := s.lowerMember(out, k, x.vals[i], depth, tk); err != nil {
			return nil, err
		}
	}
	return s.checkThen(out)
}

// lowerMember lowers v and sets it as key k of out, releasing out on
// failure. Keys JavaScript drops on receipt are dropped here already: the
// peer would never see them.
func (s *Session) lowerMember(out *Object, k string, v any, depth int, tk *ticket) error {
	if reservedKeys[k] {
		return nil
	}
	le, err := s.lowerAs(v, depth+1, tk)
	if err != nil {
		s.releaseTree(out)
		return err
	}
	out.Set(k, le)
	return nil
}

func lowerInt(i int64) (any, error) {
	if i > maxSafeInt || i < -maxSafeInt {
		return nil, fmt.Errorf("%w: integer %d is outside JavaScript's safe range; send a *big.Int", ErrUnsupported, i)
	}
	return float64(i), nil
}

// checkThen refuses an object whose "then" is callable: JavaScript's await
// would call it instead of yielding the object. It releases o when it
// refuses.
func (s *Session) checkThen(o *Object) (any, error) {
	v, _ := o.Get("then")
	switch v.(type) {
	case *localObj, *Stub:
		s.releaseTree(o)
		return nil, fmt.Errorf("%w: an object must not have a callable \"then\" (await would call it)", ErrUnsupported)
	}
	return o, nil
}

func (s *Session) lowerReflect(rv reflect.Value, depth int, tk *ticket) (any, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return lowerInt(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > maxSafeInt {
			return nil, fmt.Errorf("%w: integer %d is outside JavaScript's safe range; send a *big.Int", ErrUnsupported, u)
		}
		return float64(u), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		if rv.Type().Elem() == bigIntType {
			return s.lowerAs(rv.Interface(), depth, tk)
		}
		return s.lowerAs(rv.Elem().Interface(), depth, tk)
	case reflect.Slice:
		// A nil slice goes out as an empty one, whatever its type:
		// JavaScript code expects [] from a function returning no items.
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			if rv.IsNil() {
				return []byte{}, nil
			}
			return rv.Bytes(), nil
		}
		fallthrough
	case reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			le, err := s.lowerAs(rv.Index(i).Interface(), depth+1, tk)
			if err != nil {
				s.releaseTree(out[:i])
				return nil, err
			}
			out[i] = le
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%w: map key type %s (only string keys)", ErrUnsupported, rv.Type().Key())
		}
		// A nil map goes out as {}, like a nil map[string]any.
		vals := make(map[string]reflect.Value, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			vals[it.Key().String()] = it.Value()
		}
		keys := sortedKeys(vals)
		out := &Object{keys: make([]string, 0, len(keys)), vals: make([]any, 0, len(keys))}
		for _, k := range keys {
			if err := s.lowerMember(out, k, vals[k].Interface(), depth, tk); err != nil {
				return nil, err
			}
		}
		return s.checkThen(out)
	case reflect.Struct:
		switch rv.Type() {
		case bigIntType:
			b := rv.Interface().(big.Int)
			return new(big.Int).Set(&b), nil
		case urlType:
			u := rv.Interface().(url.URL)
			return &u, nil
		}
		// Fields go out in declaration order, as an object literal's would.
		out := &Object{}
		for _, f := range reflect.VisibleFields(rv.Type()) {
			if !f.IsExported() || f.Anonymous {
				continue
			}
			name, omitEmpty, skip := fieldName(f)
			if skip {
				continue
			}
			fv := rv.FieldByIndex(f.Index)
			if omitEmpty && fv.IsZero() {
				continue
			}
			if err := s.lowerMember(out, name, fv.Interface(), depth, tk); err != nil {
				return nil, err
			}
		}
		return s.checkThen(out)
	}
	return nil, fmt.Errorf("%w: cannot send a value of type %s", ErrUnsupported, rv.Type())
}

// fieldName is the wire name of a struct field: its json tag name, else
// its Go name in lowerCamel case.
func fieldName(f reflect.StructField) (name string, omitEmpty, skip bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = JSName(f.Name)
	}
	return name, strings.Contains(","+opts+",", ",omitempty,"), false
}

// lowerError converts an error returned by Go code into the error value
// sent to the peer. An *Error anywhere in the chain chooses the name and
// props; a *RemoteError (one received, or one built to throw a value that
// is not an Error) is sent as it is; anything else becomes a plain Error
// with the error's text.
func (s *Session) lowerError(err error, depth int) *RemoteError {
	var re *RemoteError
	if errors.As(err, &re) && re == err {
		out, lerr := s.lowerRemoteError(re, depth)
		if lerr == nil {
			return out.(*RemoteError)
		}
		return &RemoteError{Name: NameError, Message: WireMessage(lerr), IsError: true}
	}
	out := &RemoteError{Name: NameError, Message: err.Error(), IsError: true}
	var ce *Error
	if errors.As(err, &ce) {
		if ce.Name != "" {
			out.Name = ce.Name
		}
		if ce == err {
			out.Message = ce.Message
		}
		if len(ce.Props) > 0 {
			out.Props = s.lowerProps(ce.Props, depth)
		}
	} else {
		out.Message = WireMessage(err)
	}
	return out
}

// lowerProps lowers an error's own properties. Like JavaScript, it drops
// those that cannot be sent, and the ones JavaScript rebuilds itself.
func (s *Session) lowerProps(props map[string]any, depth int) map[string]any {
	out := map[string]any{}
	for k, v := range props {
		if !sentProp(k) {
			continue
		}
		if lv, err := s.lower(v, depth+1); err == nil {
			out[k] = lv
		}
	}
	return out
}

func (s *Session) lowerRemoteError(re *RemoteError, depth int) (any, error) {
	out := &RemoteError{Name: re.Name, Message: re.Message, IsError: re.IsError}
	if !re.IsError {
		v, err := s.lower(re.Value, depth+1)
		if err != nil {
			return nil, err
		}
		out.Value = v
		return out, nil
	}
	if len(re.Props) > 0 {
		out.Props = s.lowerProps(re.Props, depth)
	}
	return out, nil
}

// assign stores the canonical value a into v, converting as the parameter
// type asks. It reports a clear error for a value that does not fit. With
// ordered, objects reach an any as *Object; otherwise as map[string]any.
// A Value (or *Object) destination always gets them in order.
func assign(v reflect.Value, a any, depth int, ordered bool) error {
	if depth > 512 {
		return errors.New("value too deeply nested")
	}
	t := v.Type()
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		if a != nil {
			u, _ := outward(a, ordered || t == valueType, true)
			v.Set(reflect.ValueOf(u))
		}
		return nil
	}
	if a == nil || a == (Undefined{}) {
		return nil // zero value
	}
	av := reflect.ValueOf(a)
	if t.Kind() == reflect.Interface {
		if av.Type().Implements(t) {
			v.Set(av)
			return nil
		}
		return fmt.Errorf("expected %s, got %s", t, jsType(a))
	}
	if av.Type().AssignableTo(t) {
		v.Set(av)
		return nil
	}
	if o, ok := a.(*Object); ok && t == objectType {
		v.Set(reflect.ValueOf(*o))
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := assign(p.Elem(), a, depth+1, ordered); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := toInt(a)
		if !ok || v.OverflowInt(i) {
			return fmt.Errorf("expected an integer that fits %s, got %s", t, describeNum(a))
		}
		v.SetInt(i)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		i, ok := toInt(a)
		if !ok || i < 0 || v.OverflowUint(uint64(i)) {
			return fmt.Errorf("expected an integer that fits %s, got %s", t, describeNum(a))
		}
		v.SetUint(uint64(i))
		return nil
	case reflect.Float32, reflect.Float64:
		f, ok := a.(float64)
		if !ok {
			return fmt.Errorf("expected number, got %s", jsType(a))
		}
		v.SetFloat(f)
		return nil
	case reflect.String:
		str, ok := a.(string)
		if !ok {
			return fmt.Errorf("expected string, got %s", jsType(a))
		}
		v.SetString(str)
		return nil
	case reflect.Bool:
		b, ok := a.(bool)
		if !ok {
			return fmt.Errorf("expected boolean, got %s", jsType(a))
		}
		v.SetBool(b)
		return nil
	case reflect.Slice, reflect.Array:
		return assignList(v, a, depth, ordered)
	case reflect.Map:
		return assignMap(v, a, depth, ordered)
	case reflect.Struct:
		return assignStruct(v, a, depth, ordered)
	}
	return fmt.Errorf("expected %s, got %s", t, jsType(a))
}

// assignList is assign for a slice or array.
func assignList(v reflect.Value, a any, depth int, ordered bool) error {
	t := v.Type()
	if t.Elem().Kind() == reflect.Uint8 {
		if b, ok := a.([]byte); ok {
			if t.Kind() == reflect.Slice {
				v.SetBytes(append([]byte(nil), b...))
				return nil
			}
		}
	}
	arr, ok := a.([]any)
	if !ok {
		return fmt.Errorf("expected array, got %s", jsType(a))
	}
	if t.Kind() == reflect.Array {
		if len(arr) != t.Len() {
			return fmt.Errorf("expected array of length %d, got %d", t.Len(), len(arr))
		}
	} else {
		v.Set(reflect.MakeSlice(t, len(arr), len(arr)))
	}
	for i, e := range arr {
		if err := assign(v.Index(i), e, depth+1, ordered); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

// assignMap is assign for a map with string keys.
func assignMap(v reflect.Value, a any, depth int, ordered bool) error {
	t := v.Type()
	members, ok := objectMembers(a)
	if !ok || t.Key().Kind() != reflect.String {
		return fmt.Errorf("expected object, got %s", jsType(a))
	}
	m := reflect.MakeMapWithSize(t, 0)
	for k, e := range members {
		ev := reflect.New(t.Elem()).Elem()
		if err := assign(ev, e, depth+1, ordered); err != nil {
			return fmt.Errorf(".%s: %w", k, err)
		}
		m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
	}
	v.Set(m)
	return nil
}

// assignStruct is assign for a struct: big.Int and url.URL, or an
// object whose members fill the fields of the same name.
func assignStruct(v reflect.Value, a any, depth int, ordered bool) error {
	t := v.Type()
	switch t {
	case bigIntType:
		if f, ok := a.(float64); ok && f == math.Trunc(f) && !math.IsInf(f, 0) {
			bf := new(big.Float).SetFloat64(f)
			bi, _ := bf.Int(nil)
			v.Set(reflect.ValueOf(*bi))
			return nil
		}
	case urlType:
		if u, ok := a.(*url.URL); ok {
			v.Set(reflect.ValueOf(*u))
			return nil
		}
	}
	if bi, ok := a.(*big.Int); ok && t == bigIntType {
		v.Set(reflect.ValueOf(*bi))
		return nil
	}
	if _, ok := objectMembers(a); !ok {
		return fmt.Errorf("expected object for %s, got %s", t, jsType(a))
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, skip := fieldName(f)
		if skip {
			continue
		}
		e, ok := member(a, name)
		if !ok {
			e, ok = member(a, f.Name)
		}
		if !ok {
			continue
		}
		if err := assign(v.FieldByIndex(f.Index), e, depth+1, ordered); err != nil {
			return fmt.Errorf(".%s: %w", name, err)
		}
	}
	return nil
}

// objectMembers yields the members of an object value (*Object or map).
func objectMembers(a any) (func(yield func(string, any) bool), bool) {
	switch x := a.(type) {
	case *Object:
		return x.All(), true
	case map[string]any:
		return func(yield func(string, any) bool) {
			for k, v := range x {
				if !yield(k, v) {
					return
				}
			}
		}, true
	}
	return nil, false
}

// member reads key k of an object value.
func member(a any, k string) (any, bool) {
	switch x := a.(type) {
	case *Object:
		return x.Get(k)
	case map[string]any:
		v, ok := x[k]
		return v, ok
	}
	return nil, false
}

// outward converts a canonical tree into what Go code receives: with
// objs, objects passed by reference become the Go values they wrap, and,
// unless ordered, *Object nodes become map[string]any. It copies only the
// containers that change and reports whether any did; stubs are shared.
func outward(v any, ordered, objs bool) (any, bool) {
	switch x := v.(type) {
	case *localObj:
		if objs {
			return x.val.Interface(), true
		}
	case []any:
		var out []any
		for i, e := range x {
			if u, ch := outward(e, ordered, objs); ch {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = u
			}
		}
		if out != nil {
			return out, true
		}
	case *Object:
		if !ordered {
			m := make(map[string]any, len(x.keys))
			for i, k := range x.keys {
				m[k], _ = outward(x.vals[i], ordered, objs)
			}
			return m, true
		}
		var out *Object
		for i, e := range x.vals {
			if u, ch := outward(e, ordered, objs); ch {
				if out == nil {
					out = &Object{keys: append([]string(nil), x.keys...), vals: append([]any(nil), x.vals...), nidx: x.nidx}
				}
				out.vals[i] = u
			}
		}
		if out != nil {
			return out, true
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if u, ch := outward(e, ordered, objs); ch {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = u
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

func toInt(a any) (int64, bool) {
	switch x := a.(type) {
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.Abs(x) > 1<<63-1024 {
			return 0, false
		}
		return int64(x), true
	case *big.Int:
		if !x.IsInt64() {
			return 0, false
		}
		return x.Int64(), true
	}
	return 0, false
}

func describeNum(a any) string {
	if f, ok := a.(float64); ok {
		return string(appendNumberForText(nil, f))
	}
	if b, ok := a.(*big.Int); ok {
		return b.String() + "n"
	}
	return jsType(a)
}

func appendNumberForText(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return appendJSNumber(b, f)
}

// jsType names the JavaScript type of a canonical value, for messages.
func jsType(a any) string {
	switch a.(type) {
	case nil:
		return "null"
	case Undefined:
		return "undefined"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case *big.Int:
		return "bigint"
	case time.Time, InvalidDate:
		return "Date"
	case []byte, TypedBytes:
		return "bytes"
	case []any:
		return "array"
	case map[string]any, *Object:
		return "object"
	case *Stub:
		return "stub"
	case *RemoteError:
		return "Error"
	case *url.URL:
		return "URL"
	case Headers:
		return "Headers"
	}
	return fmt.Sprintf("%T", a)
}
