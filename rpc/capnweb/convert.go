package capnweb

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"reflect"
	"sort"
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
func (s *Session) lower(v any, depth int) (any, error) {
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
			return nil, nil
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
			le, err := s.lower(e, depth+1)
			if err != nil {
				s.releaseTree(out[:i])
				return nil, err
			}
			out[i] = le
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if err := checkKey(k, e); err != nil {
				s.releaseTree(out)
				return nil, err
			}
			le, err := s.lower(e, depth+1)
			if err != nil {
				s.releaseTree(out)
				return nil, err
			}
			out[k] = le
		}
		if err := checkThen(out); err != nil {
			s.releaseTree(out)
			return nil, err
		}
		return out, nil
	}
	if o := newLocalObj(v); o != nil {
		o = s.intern(o)
		s.hold(o)
		return o, nil
	}
	return s.lowerReflect(reflect.ValueOf(v), depth)
}

func lowerInt(i int64) (any, error) {
	if i > maxSafeInt || i < -maxSafeInt {
		return nil, fmt.Errorf("%w: integer %d is outside JavaScript's safe range; send a *big.Int", ErrUnsupported, i)
	}
	return float64(i), nil
}

func checkKey(k string, _ any) error {
	if reservedKeys[k] {
		return fmt.Errorf("%w: object key %q is dropped by JavaScript", ErrUnsupported, k)
	}
	return nil
}

// checkThen refuses an object whose "then" is callable: JavaScript's await
// would call it instead of yielding the object.
func checkThen(m map[string]any) error {
	switch m["then"].(type) {
	case *localObj, *Stub:
		return fmt.Errorf("%w: an object must not have a callable \"then\" (await would call it)", ErrUnsupported)
	}
	return nil
}

func (s *Session) lowerReflect(rv reflect.Value, depth int) (any, error) {
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
			return s.lower(rv.Interface(), depth)
		}
		return s.lower(rv.Elem().Interface(), depth)
	case reflect.Slice:
		if rv.IsNil() {
			return nil, nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return rv.Bytes(), nil
		}
		fallthrough
	case reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			le, err := s.lower(rv.Index(i).Interface(), depth+1)
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
		if rv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			k := it.Key().String()
			if err := checkKey(k, nil); err != nil {
				s.releaseTree(out)
				return nil, err
			}
			le, err := s.lower(it.Value().Interface(), depth+1)
			if err != nil {
				s.releaseTree(out)
				return nil, err
			}
			out[k] = le
		}
		if err := checkThen(out); err != nil {
			s.releaseTree(out)
			return nil, err
		}
		return out, nil
	case reflect.Struct:
		switch rv.Type() {
		case bigIntType:
			b := rv.Interface().(big.Int)
			return new(big.Int).Set(&b), nil
		case urlType:
			u := rv.Interface().(url.URL)
			return &u, nil
		}
		out := map[string]any{}
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
			if err := checkKey(name, nil); err != nil {
				s.releaseTree(out)
				return nil, err
			}
			le, err := s.lower(fv.Interface(), depth+1)
			if err != nil {
				s.releaseTree(out)
				return nil, err
			}
			out[name] = le
		}
		if err := checkThen(out); err != nil {
			s.releaseTree(out)
			return nil, err
		}
		return out, nil
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
		name = lowerCamel(f.Name)
	}
	return name, strings.Contains(","+opts+",", ",omitempty,"), false
}

// lowerError converts an error returned by Go code into the error value
// sent to the peer. An *Error anywhere in the chain chooses the name and
// props; anything else becomes a plain Error with the error's text.
func (s *Session) lowerError(err error, depth int) *RemoteError {
	var re *RemoteError
	if errors.As(err, &re) && re == err {
		out, lerr := s.lowerRemoteError(re, depth)
		if lerr == nil {
			return out.(*RemoteError)
		}
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
			out.Props = map[string]any{}
			keys := make([]string, 0, len(ce.Props))
			for k := range ce.Props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if k == "name" || k == "message" || k == "stack" || checkKey(k, nil) != nil {
					continue
				}
				// Like JavaScript, props that cannot be sent are dropped.
				if lv, lerr := s.lower(ce.Props[k], depth+1); lerr == nil {
					out.Props[k] = lv
				}
			}
		}
	} else {
		out.Message = wireMessage(err)
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
		out.Props = map[string]any{}
		for k, v := range re.Props {
			if lv, err := s.lower(v, depth+1); err == nil {
				out.Props[k] = lv
			}
		}
	}
	return out, nil
}

// assign stores the canonical value a into v, converting as the parameter
// type asks. It reports a clear error for a value that does not fit.
func assign(v reflect.Value, a any, depth int) error {
	if depth > 512 {
		return errors.New("value too deeply nested")
	}
	t := v.Type()
	if a == nil || a == (Undefined{}) {
		if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
			v.Set(reflect.ValueOf(&a).Elem())
		}
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
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := assign(p.Elem(), a, depth+1); err != nil {
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
			if err := assign(v.Index(i), e, depth+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case reflect.Map:
		obj, ok := a.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return fmt.Errorf("expected object, got %s", jsType(a))
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		for k, e := range obj {
			ev := reflect.New(t.Elem()).Elem()
			if err := assign(ev, e, depth+1); err != nil {
				return fmt.Errorf(".%s: %w", k, err)
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		v.Set(m)
		return nil
	case reflect.Struct:
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
		obj, ok := a.(map[string]any)
		if !ok {
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
			e, ok := obj[name]
			if !ok {
				e, ok = obj[f.Name]
			}
			if !ok {
				continue
			}
			if err := assign(v.FieldByIndex(f.Index), e, depth+1); err != nil {
				return fmt.Errorf(".%s: %w", name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("expected %s, got %s", t, jsType(a))
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
	case map[string]any:
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
