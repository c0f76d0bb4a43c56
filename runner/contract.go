package runner

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// The script API's request objects. A script passes one of these as an
// options (or target, or report) object; the host decodes it itself (see
// objArg), so every key it takes is named here, by its json tag or else
// its Go name in lowerCamel case, as capnweb names struct fields.
//
// A key the type does not name is refused, not ignored, in every request:
// an option the host dropped silently (a dryRun it never saw) would do
// something other than what the script asked. A key whose value is
// undefined or null counts as absent. A refusal is a TypeError with code
// "invalid" naming the key. The SDK checks most options before it sends
// them, so a script mostly meets these through a host and SDK that
// disagree, which the contract test exists to prevent.
// The results are the types the methods return, sent as capnweb sends a
// struct. runner/sdk/contract.json lists every method with these shapes;
// a test regenerates it from the capability objects and compares.

// NotifyOptions is the options object of ui.notify.
type NotifyOptions struct {
	// Level is info (the default), success, warning or error.
	Level Level `json:"level"`
}

// OpenTabOptions is the options object of tabs.open.
type OpenTabOptions struct {
	// Background opens the tab without showing it.
	Background bool `json:"background"`
	// Timeout bounds the wait for a tab slot and the load, in
	// milliseconds; absent, the wait is the run's.
	Timeout float64 `json:"timeout"`
	// Seq is the SDK's number for a background open, in the order the
	// script made them, which the host's queue keeps.
	Seq *int `json:"seq"`
}

// NavigationOptions is the options object of tab.goto and
// tab.waitForNavigation.
type NavigationOptions struct {
	// WaitUntil is "load" (the default) or "domcontentloaded".
	WaitUntil string `json:"waitUntil"`
	// Timeout bounds the navigation, in milliseconds; 0 is the host's
	// default.
	Timeout float64 `json:"timeout"`
}

// waitUntil is the cdp form of WaitUntil, or an invalid error.
func (o NavigationOptions) waitUntil() (cdp.WaitUntil, error) {
	switch o.WaitUntil {
	case "", "load":
		return cdp.Load, nil
	case "domcontentloaded":
		return cdp.DOMContentLoaded, nil
	}
	return "", codeErr(errcode.Invalid, capnweb.NameRangeError, "waitUntil must be \"load\" or \"domcontentloaded\", not %q", o.WaitUntil)
}

// WaitForOptions is the options object of tab.waitFor.
type WaitForOptions struct {
	// Timeout bounds the wait, in milliseconds; 0 is the host's default.
	Timeout float64 `json:"timeout"`
}

// ScreenshotOptions is the options object of tab.screenshot.
type ScreenshotOptions struct {
	// FullPage captures the whole page, not only the visible part.
	FullPage bool `json:"fullPage"`
}

// FormOptions is the options object of the form actions: fill, check,
// select, setFiles and click.
type FormOptions struct {
	// DryRun resolves and checks the target and changes nothing.
	DryRun bool `json:"dryRun"`
	// Parts are CSS selectors for the parts of a custom control, by name
	// ("trigger", "option", "value").
	Parts map[string]string `json:"parts"`
	// Timeout bounds the wait for the target, in milliseconds; 0 is the
	// host's default.
	Timeout float64 `json:"timeout"`
}

// PressOptions is the options object of tab.press.
type PressOptions struct {
	FormOptions
	// Target is the element to focus before the key is pressed; nil
	// presses it on whatever has focus.
	Target *cdp.Locator `json:"target"`
	// Modifiers are the keys held down: Alt, Control (or Ctrl), Meta,
	// Shift.
	Modifiers []string `json:"modifiers"`
}

// DialogAnswers is tab.onDialog's answers by dialog type; each is
// "accept", "dismiss" or a [DialogAnswer] object. A type left out is
// dismissed.
type DialogAnswers struct {
	Alert        capnweb.Value `json:"alert"`
	Confirm      capnweb.Value `json:"confirm"`
	Prompt       capnweb.Value `json:"prompt"`
	Beforeunload capnweb.Value `json:"beforeunload"`
}

// DialogAnswer is an answer to a dialog in object form.
type DialogAnswer struct {
	// Accept presses OK; false presses Cancel. It is required.
	Accept *bool `json:"accept"`
	// PromptText is what an accepted prompt returns to the page.
	PromptText string `json:"promptText"`
}

// ProgressEvent is the report of context.progress.
type ProgressEvent struct {
	Message string `json:"message"`
	// Fraction is how much is done, from 0 to 1; nil when unknown.
	Fraction *float64 `json:"fraction"`
}

// objArg is an object argument of a host method that the host decodes
// itself into T, with [decodeRequest]. A struct parameter decoded by
// capnweb would drop a key the struct does not name and refuse a mistyped
// one with a TypeError that carries no code; a script gets code "invalid"
// and the key it got wrong instead. A value that is not an object is
// still refused by capnweb, as for any map parameter; undefined and null
// arrive as nil, which decodes to the zero T.
type objArg[T any] map[string]any

// RequestType is T, for the contract test that describes the methods.
func (objArg[T]) RequestType() reflect.Type { return reflect.TypeFor[T]() }

// decode decodes the argument; api (tab.goto) and what (options) name it
// in a refusal.
func (o objArg[T]) decode(api, what string) (T, error) {
	var v T
	if o == nil {
		return v, nil
	}
	// No request type takes a function: one anywhere in the object is
	// the script handing the host something that is not data.
	if releaseStubs(map[string]any(o)) {
		return v, notDataErr(api, what)
	}
	err := decodeRequest(api, what, map[string]any(o), &v)
	return v, err
}

// targetHint says what a locator looks like, after a refused one.
const targetHint = "a target is one of {label}, {placeholder}, {name}, {role, name}, {text}, {selector}, {testId} or {ref}"

var locatorType = reflect.TypeFor[cdp.Locator]()

// locatorOf decodes a target argument: a locator naming an element one
// way at least.
func locatorOf(api string, o objArg[cdp.Locator]) (cdp.Locator, error) {
	l, err := o.decode(api, "target")
	if err != nil {
		return l, err
	}
	return l, checkLocator(api, l)
}

// checkLocator refuses a locator that names no element.
func checkLocator(api string, l cdp.Locator) error {
	if l.Label == "" && l.Placeholder == "" && l.Name == "" && l.Role == "" && l.Text == "" && l.Selector == "" && l.TestID == "" && l.Ref == "" {
		return codeErr(errcode.Invalid, capnweb.NameTypeError, "%s: the target names no element; %s", api, targetHint)
	}
	return nil
}

// decodeRequest decodes a script's value a into *dst, as a request of api.
// It refuses what capnweb would let through: a key the type does not name,
// and a value of the wrong type, each named by its path (what.key).
func decodeRequest(api, what string, a capnweb.Value, dst any) error {
	if err := decodeValue(reflect.ValueOf(dst).Elem(), a, what); err != nil {
		return codeErr(errcode.Invalid, capnweb.NameTypeError, "%s: %v", api, err)
	}
	return nil
}

var (
	valueType = reflect.TypeFor[capnweb.Value]()
	anyType   = reflect.TypeFor[any]()
)

// decodeValue stores a into v. path names the value in errors.
func decodeValue(v reflect.Value, a capnweb.Value, path string) error {
	if a == nil || a == (capnweb.Undefined{}) {
		return nil // absent: the zero value, as capnweb leaves a missing argument
	}
	t := v.Type()
	if t == valueType || t == anyType {
		v.Set(reflect.ValueOf(a))
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := decodeValue(p.Elem(), a, path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.String:
		s, ok := a.(string)
		if !ok {
			return mistyped(path, "a string", a)
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := a.(bool)
		if !ok {
			return mistyped(path, "true or false", a)
		}
		v.SetBool(b)
		return nil
	case reflect.Float32, reflect.Float64:
		f, ok := a.(float64)
		if !ok {
			return mistyped(path, "a number", a)
		}
		v.SetFloat(f)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := a.(float64)
		if !ok || f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 || v.OverflowInt(int64(f)) {
			return mistyped(path, "a whole number", a)
		}
		v.SetInt(int64(f))
		return nil
	case reflect.Slice:
		arr, ok := a.([]any)
		if !ok {
			return mistyped(path, "a list", a)
		}
		s := reflect.MakeSlice(t, len(arr), len(arr))
		for i, e := range arr {
			if err := decodeValue(s.Index(i), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		o, ok := members(a)
		if !ok || t.Key().Kind() != reflect.String {
			return mistyped(path, "an object", a)
		}
		m := reflect.MakeMapWithSize(t, 0)
		for k, e := range o {
			if e == nil || e == (capnweb.Undefined{}) {
				continue
			}
			ev := reflect.New(t.Elem()).Elem()
			if err := decodeValue(ev, e, path+"."+k); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		v.Set(m)
		return nil
	case reflect.Struct:
		o, ok := members(a)
		if !ok {
			return mistyped(path, "an object", a)
		}
		err := decodeFields(v, o, path)
		if err != nil && t == locatorType {
			err = fmt.Errorf("%w; %s", err, targetHint)
		}
		return err
	}
	return fmt.Errorf("%s: the host cannot decode a %s", path, t) // a request type the decoder does not know
}

// decodeFields decodes the members of an object into the fields of
// struct v.
func decodeFields(v reflect.Value, o iter.Seq2[string, any], path string) error {
	fields := requestFields(v.Type())
	for k, e := range o {
		if e == nil || e == (capnweb.Undefined{}) {
			continue
		}
		i := slices.IndexFunc(fields, func(f requestField) bool { return f.Name == k })
		if i < 0 {
			names := make([]string, len(fields))
			for j, f := range fields {
				names[j] = f.Name
			}
			return fmt.Errorf("unknown key %q in %s (it takes %s)", k, path, strings.Join(names, ", "))
		}
		if err := decodeValue(v.FieldByIndex(fields[i].Index), e, path+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// members yields the members of an object value, as capnweb hands it
// over: an *capnweb.Object in its order, or a map with its keys sorted, so
// that the first bad key named is always the same one.
func members(a capnweb.Value) (iter.Seq2[string, any], bool) {
	switch x := a.(type) {
	case *capnweb.Object:
		return x.All(), true
	case map[string]any:
		return func(yield func(string, any) bool) {
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if !yield(k, x[k]) {
					return
				}
			}
		}, true
	}
	return nil, false
}

// requestField is one key of a request or result object: its wire name
// and the struct field that holds it.
type requestField struct {
	Name  string
	Index []int // for reflect.Value.FieldByIndex
	Type  reflect.Type
}

// requestFields lists the keys of struct type t as scripts see them, in
// declaration order: the exported fields (those of embedded structs
// included, as capnweb sends them), each named by its json tag or else
// its Go name in lowerCamel case; a field tagged json:"-" has none.
func requestFields(t reflect.Type) []requestField {
	var out []requestField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = capnweb.JSName(f.Name)
		}
		out = append(out, requestField{Name: name, Index: f.Index, Type: f.Type})
	}
	return out
}

// mistyped is the error for a value of the wrong type.
func mistyped(path, want string, a capnweb.Value) error {
	return fmt.Errorf("%s must be %s, not %s", path, want, jsKind(a))
}

// jsKind names the kind of a script's value, as a script would.
func jsKind(a capnweb.Value) string {
	switch x := a.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case *capnweb.Object, map[string]any:
		return "an object"
	case []byte, capnweb.TypedBytes:
		return "bytes"
	case *big.Int:
		return "a bigint"
	case time.Time, capnweb.InvalidDate:
		return "a Date"
	case *capnweb.Stub:
		return "a function"
	default:
		return fmt.Sprintf("a %T", x)
	}
}
