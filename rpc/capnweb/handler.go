package capnweb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// Handler is an object exported by reference whose members are resolved at
// call time. Use it for dynamic objects; for a fixed API, export a struct
// pointer and let its exported methods be found by reflection.
//
// Method and property names arrive exactly as the script wrote them. Return
// an error wrapping [ErrNotFound] for an unknown name: a call then rejects
// with TypeError "'name' is not a function." and a property read yields
// undefined, as they do against a JavaScript server.
type Handler interface {
	CallMethod(ctx context.Context, name string, args []any) (any, error)
	GetProperty(ctx context.Context, name string) (any, error)
}

// Disposer is implemented by exported objects that want to know when the
// peer no longer references them: Dispose runs once, when the peer has
// released every reference it was given (or the session ended), on a
// goroutine of the session. It must not block for long.
type Disposer interface {
	Dispose()
}

// Func adapts a plain function to a callable object: the peer sees a
// JavaScript function. Any func value whose signature follows the method
// rules in [Session] is accepted too; Func is the dynamic form.
type Func func(ctx context.Context, args []any) (any, error)

var (
	ctxType = reflect.TypeFor[context.Context]()
	errType = reflect.TypeFor[error]()
)

// method is one callable Go function with its calling convention.
type method struct {
	fn       reflect.Value // unbound function; receiver is the first argument when recv is set
	recv     bool
	hasCtx   bool
	params   []reflect.Type
	variadic bool
	hasRes   bool
	hasErr   bool
	// name and strict are set for a method of a type implementing
	// StrictArgs: its arguments are decoded strictly, and refusals
	// worded by ArgError under name.
	name   string
	strict bool
}

// methodSet caches the callable methods of a type. It holds only immutable
// type information, like encoding/json's caches.
var methodSets sync.Map // reflect.Type -> map[string]*method

// methodsOf returns the exported methods of t that follow the calling
// rules, keyed by lowerCamel name, or nil if there are none.
func methodsOf(t reflect.Type) map[string]*method {
	if m, ok := methodSets.Load(t); ok {
		return m.(map[string]*method)
	}
	var set map[string]*method
	renames := methodNames(t)
	strict := t.Implements(strictArgsType)
	for i := 0; i < t.NumMethod(); i++ {
		rm := t.Method(i)
		if !rm.IsExported() || rm.Name == "Dispose" || strict && rm.Name == "ArgError" {
			continue
		}
		name := JSName(rm.Name)
		if n, ok := renames[rm.Name]; ok {
			name = n
		}
		if name == "then" || reservedKeys[name] {
			continue
		}
		m := signature(rm.Type, true)
		if m == nil {
			continue
		}
		m.fn = rm.Func
		m.name, m.strict = name, strict
		if set == nil {
			set = map[string]*method{}
		}
		set[name] = m
	}
	methodSets.Store(t, set)
	return set
}

// Names, as the type of a blank field of an exported struct, renames its
// methods for the peer. Its tag lists GoName=jsName pairs:
//
//	type API struct {
//		_ capnweb.Names `capnweb:"LastCounterID=lastCounterId,URLFor=urlFor"`
//	}
//
// A method renamed is reachable under its new name only. Without it a
// method's name is its Go name in lowerCamel case, which a JavaScript
// server's name ("lastCounterId") cannot always match.
type Names struct{}

var namesType = reflect.TypeFor[Names]()

// methodNames reads the renames of t's Names fields.
func methodNames(t reflect.Type) map[string]string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out map[string]string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type != namesType {
			continue
		}
		for _, pair := range strings.Split(f.Tag.Get("capnweb"), ",") {
			goName, jsName, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || goName == "" || jsName == "" {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[goName] = jsName
		}
	}
	return out
}

// signature checks a function type against the calling rules: an optional
// leading context.Context, any parameters, and results (), (error), (T) or
// (T, error). With recv set, the first input is the receiver.
func signature(ft reflect.Type, recv bool) *method {
	m := &method{recv: recv, variadic: ft.IsVariadic()}
	first := 0
	if recv {
		first = 1
	}
	for i := first; i < ft.NumIn(); i++ {
		in := ft.In(i)
		if i == first && in == ctxType {
			m.hasCtx = true
			continue
		}
		m.params = append(m.params, in)
	}
	switch ft.NumOut() {
	case 0:
	case 1:
		if ft.Out(0) == errType {
			m.hasErr = true
		} else {
			m.hasRes = true
		}
	case 2:
		if ft.Out(1) != errType {
			return nil
		}
		m.hasRes, m.hasErr = true, true
	default:
		return nil
	}
	return m
}

// JSName is the name the peer sees for a Go method, or for a struct field
// without a json tag: the leading run of capitals is lowered ("Add" →
// "add", "URLFor" → "urlFor", "ID" → "id").
func JSName(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) {
		n-- // keep the capital that starts the next word
	}
	for i := range n {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

// recoverCall turns a panic in user code into what the peer hears when a Go method panics: the session
// survives, and the panic value is kept for Go callers only.
func recoverCall(err *error) {
	if r := recover(); r != nil {
		*err = &Error{Message: "internal error", Err: fmt.Errorf("capnweb: method panicked: %v", r)}
	}
}

// call invokes m with the decoded arguments.
func (m *method) call(ctx context.Context, recv reflect.Value, args []any) (res any, err error) {
	defer recoverCall(&err)
	in := make([]reflect.Value, 0, len(m.params)+2)
	if m.recv {
		in = append(in, recv)
	}
	if m.hasCtx {
		in = append(in, reflect.ValueOf(ctx))
	}
	ordered := false
	if sess := SessionFromContext(ctx); sess != nil {
		ordered = sess.opts.OrderedObjects
	}
	fixed := m.params
	if m.variadic {
		fixed = m.params[:len(m.params)-1]
	}
	for i, pt := range fixed {
		var a any = Undefined{}
		if i < len(args) {
			a = args[i]
		}
		v := reflect.New(pt).Elem()
		if err := m.assignArg(recv, v, a, i, ordered); err != nil {
			return nil, err
		}
		in = append(in, v)
	}
	if m.variadic {
		et := m.params[len(m.params)-1].Elem()
		for i := len(fixed); i < len(args); i++ {
			v := reflect.New(et).Elem()
			if err := m.assignArg(recv, v, args[i], i, ordered); err != nil {
				return nil, err
			}
			in = append(in, v)
		}
	}
	out := m.fn.Call(in)
	res = Undefined{}
	if m.hasRes {
		res = out[0].Interface()
	}
	if m.hasErr {
		if e := out[len(out)-1]; !e.IsNil() {
			err = e.Interface().(error)
		}
	}
	return res, err
}

// assignArg decodes argument i (from 0) into v, strictly for a strict
// method, and returns the error the call rejects with when it does not
// fit.
func (m *method) assignArg(recv, v reflect.Value, a any, i int, ordered bool) error {
	if !m.strict {
		if err := assign(v, a, 0, ordered); err != nil {
			return &Error{Name: NameTypeError, Message: fmt.Sprintf("argument %d: %s", i+1, WireMessage(err)), Props: map[string]any{"argument": i + 1}, Err: err}
		}
		return nil
	}
	err := decodeStrict(v, a, i+1, ordered)
	if err == nil {
		return nil
	}
	de := err.(*DecodeError)
	if werr := recv.Interface().(StrictArgs).ArgError(m.name, de); werr != nil {
		return werr
	}
	return &Error{Name: NameTypeError, Message: de.Message(fmt.Sprintf("argument %d", i+1)), Props: de.Props(), Err: de}
}

// localObj is a Go object exported (or exportable) by reference. It counts
// the references the session holds to it: export-table entries and values
// that contain it. Dispose runs when the count returns to zero.
type localObj struct {
	val     reflect.Value // the object (for methods) or the func
	target  Handler       // set for Handler implementations
	fn      *method       // set for callable funcs
	dyn     Func          // set for Func values
	methods map[string]*method
	fields  map[string][]int // capnweb-tagged fields
	key     any              // identity key in the session's table, or nil
	turns   turnQ            // the order its calls start in

	holds    int // guarded by Session.mu
	disposed bool
}

// newLocalObj describes v as an object passed by reference, or returns nil
// when v is passed by value.
func newLocalObj(v any) *localObj {
	switch x := v.(type) {
	case Handler:
		return &localObj{target: x, val: reflect.ValueOf(v)}
	case Func:
		return &localObj{val: reflect.ValueOf(v), dyn: x}
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Func:
		if rv.IsNil() {
			return nil
		}
		m := signature(rv.Type(), false)
		if m == nil {
			return nil
		}
		m.fn = rv
		return &localObj{val: rv, fn: m}
	case reflect.Pointer:
		if rv.IsNil() {
			return nil
		}
		ms := methodsOf(rv.Type())
		fs := taggedFields(rv.Type().Elem())
		if ms == nil && fs == nil {
			return nil
		}
		return &localObj{val: rv, methods: ms, fields: fs, key: v}
	case reflect.Struct:
		ms := methodsOf(rv.Type())
		if ms == nil {
			return nil
		}
		return &localObj{val: rv, methods: ms}
	}
	return nil
}

// taggedFields lists the fields of struct type t marked `capnweb:"name"`,
// the only fields readable as properties of an object passed by reference.
func taggedFields(t reflect.Type) map[string][]int {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var fs map[string][]int
	for _, f := range reflect.VisibleFields(t) {
		name, ok := f.Tag.Lookup("capnweb")
		if !ok || !f.IsExported() || name == "" || name == "-" || name == "then" || reservedKeys[name] {
			continue
		}
		if fs == nil {
			fs = map[string][]int{}
		}
		fs[name] = f.Index
	}
	return fs
}

func (o *localObj) dispose() {
	if d, ok := o.val.Interface().(Disposer); ok {
		d.Dispose()
	}
}

// notFunction is the rejection JavaScript produces for calling a missing
// or non-function member.
func notFunction(name string) error {
	return &Error{Name: NameTypeError, Message: fmt.Sprintf("'%s' is not a function.", name), Err: ErrNotFound}
}

// callSelf calls o as a function (an empty path in the call).
func (o *localObj) callSelf(ctx context.Context, args []any) (res any, err error) {
	defer recoverCall(&err)
	switch {
	case o.dyn != nil:
		return o.dyn(ctx, args)
	case o.fn != nil:
		return o.fn.call(ctx, reflect.Value{}, args)
	}
	return nil, notFunction("")
}

// callMember calls method name on o.
func (o *localObj) callMember(ctx context.Context, name string, args []any) (res any, err error) {
	defer recoverCall(&err)
	if o.fn != nil || o.dyn != nil {
		return nil, notFunction(name)
	}
	if o.target != nil {
		if name == "then" || reservedKeys[name] {
			return nil, notFunction(name)
		}
		res, err := o.target.CallMethod(ctx, name, args)
		if err != nil && isNotFound(err) {
			return nil, notFunction(name)
		}
		return res, err
	}
	m := o.methods[name]
	if m == nil {
		return nil, notFunction(name)
	}
	return m.call(ctx, o.val, args)
}

// getMember reads property name of o: a tagged field, or a method as a
// callable object, or undefined.
func (o *localObj) getMember(ctx context.Context, name string) (res any, err error) {
	defer recoverCall(&err)
	if name == "then" || reservedKeys[name] {
		return Undefined{}, nil
	}
	if o.target != nil {
		res, err := o.target.GetProperty(ctx, name)
		if err != nil && isNotFound(err) {
			return Undefined{}, nil
		}
		return res, err
	}
	if idx, ok := o.fields[name]; ok {
		return o.val.Elem().FieldByIndex(idx).Interface(), nil
	}
	if m := o.methods[name]; m != nil {
		bound := *m
		recv := o.val
		return Func(func(ctx context.Context, args []any) (any, error) { return bound.call(ctx, recv, args) }), nil
	}
	return Undefined{}, nil
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
