package capnweb

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type strictTarget struct {
	Label string `json:"label"`
	Exact bool
}

type strictBase struct {
	DryRun bool `json:"dryRun"`
}

type strictOptions struct {
	strictBase
	Timeout   float64           `json:"timeout"`
	Seq       *int              `json:"seq"`
	Parts     map[string]string `json:"parts"`
	Modifiers []string          `json:"modifiers"`
	Target    *strictTarget     `json:"target"`
	Hidden    string            `json:"-"`
	Any       Value             `json:"any"`
}

// strictAPI takes its arguments strictly; its ArgError words refusals as
// an API would, with a code and the argument's name.
type strictAPI struct{ got chan strictOptions }

func (a *strictAPI) Act(o strictOptions, t strictTarget) string {
	a.got <- o
	return t.Label
}

func (a *strictAPI) Count(n int) int { return n }

func (a *strictAPI) ArgError(method string, err *DecodeError) error {
	if method == "count" {
		return nil // the default wording
	}
	root := "options"
	if err.Arg == 2 {
		root = "target"
	}
	return Errorf(NameTypeError, map[string]any{"code": "invalid"}, "api.%s: %s", method, err.Message(root))
}

// laxAPI is strictAPI's method without the interface: keys it does not
// know are dropped, as before.
type laxAPI struct{ got chan strictOptions }

func (a *laxAPI) Act(o strictOptions, t strictTarget) string {
	a.got <- o
	return t.Label
}

// A StrictArgs object's methods refuse unknown keys and mistyped values
// with a *DecodeError naming the path, which ArgError words; undefined and
// null count as absent, and other objects keep the lax decoding.
func TestStrictArgs(t *testing.T) {
	CheckLeaks(t)
	api := &strictAPI{got: make(chan strictOptions, 4)}
	_, main := sessionPair(t, api, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	target := NewObject("label", "Email")

	for _, c := range []struct {
		opts   any
		target any
		want   string
	}{
		{NewObject("timeout", "5000"), target, "api.act: options.timeout must be a number, not a string"},
		{NewObject("dryRun", true, "wait", 5.0), target, `api.act: unknown key "wait" in options (it takes dryRun, timeout, seq, parts, modifiers, target, any)`},
		{NewObject("Hidden", "x"), target, `unknown key "Hidden" in options`},
		{NewObject("seq", 1.5), target, "options.seq must be a whole number, not a number"},
		{NewObject("parts", NewObject("trigger", 3.0)), target, "options.parts.trigger must be a string, not a number"},
		{NewObject("modifiers", []any{"Shift", 1.0}), target, "options.modifiers[1] must be a string, not a number"},
		{NewObject("target", NewObject("label", "x", "lable", "y")), target, `unknown key "lable" in options.target (it takes label, exact)`},
		{NewObject("dryRun", "yes"), target, "options.dryRun must be true or false, not a string"},
		{"fast", target, "options must be an object, not a string"},
		{nil, NewObject("lable", "Email"), `api.act: unknown key "lable" in target (it takes label, exact)`},
		{nil, []any{}, "target must be an object, not a list"},
	} {
		_, err := main.CallMethod(ctx, "act", c.opts, c.target)
		var re *RemoteError
		if assert.ErrorAs(t, err, &re, c.want) {
			assert.Equal(t, NameTypeError, re.Name, c.want)
			assert.Contains(t, re.Message, c.want)
			assert.Equal(t, "invalid", re.Props["code"], c.want)
		}
	}

	// Absent: undefined and null leave the zero value, at every depth.
	res, err := main.CallMethod(ctx, "act", NewObject("timeout", Undefined{}, "bogus", nil, "parts", NewObject("a", nil, "b", "x"), "seq", 3.0, "any", NewObject("z", 1.0), "dryRun", true), Undefined{})
	require.NoError(t, err)
	assert.Equal(t, "", res)
	got := <-api.got
	three := 3
	assert.Equal(t, strictOptions{strictBase: strictBase{DryRun: true}, Seq: &three, Parts: map[string]string{"b": "x"}, Any: NewObject("z", 1.0)}, got)

	// Without a wording of its own, the refusal names the argument.
	_, err = main.CallMethod(ctx, "count", 1.5)
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, NameTypeError, re.Name)
	assert.Equal(t, "argument 1 must be a whole number, not a number", re.Message)
	assert.Nil(t, re.Props["code"])
	assert.Equal(t, map[string]any{"argument": 1.0, "path": "", "want": "a whole number", "got": "a number"}, re.Props,
		"the refusal's fields, for the peer to read")

	// ArgError is no method of the object.
	_, err = main.CallMethod(ctx, "argError", "x", nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "'argError' is not a function.", re.Message)
}

// Without StrictArgs an unknown key is dropped, as it always was.
func TestLaxArgsDropUnknownKeys(t *testing.T) {
	CheckLeaks(t)
	api := &laxAPI{got: make(chan strictOptions, 1)}
	_, main := sessionPair(t, api, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := main.CallMethod(ctx, "act", NewObject("wait", 5.0, "timeout", 2.0), NewObject("label", "x", "lable", "y"))
	require.NoError(t, err)
	assert.Equal(t, "x", res)
	assert.Equal(t, 2.0, (<-api.got).Timeout)

	// A refusal names the argument as a field too.
	_, err = main.CallMethod(ctx, "act", nil, "x")
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, NameTypeError, re.Name)
	assert.Equal(t, map[string]any{"argument": 2.0}, re.Props, "%v", err)
}

// A function where data goes is named as one, so that an API can refuse
// it for what it is.
func TestStrictArgsFunction(t *testing.T) {
	CheckLeaks(t)
	_, main := sessionPair(t, &strictAPI{got: make(chan strictOptions, 1)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := main.CallMethod(ctx, "act", NewObject("parts", NewObject("trigger", Func(func(context.Context, []any) (any, error) { return nil, nil }))), nil)
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "api.act: options.parts.trigger must be a string, not a function", re.Message)
}

// Decode decodes a value received as a Value (a union) by the same rules.
func TestDecodeStrict(t *testing.T) {
	var tg strictTarget
	err := Decode(NewObject("label", "x", "exact", true), &tg)
	require.NoError(t, err)
	assert.Equal(t, strictTarget{Label: "x", Exact: true}, tg)

	err = Decode(map[string]any{"z": 1.0, "label": 2.0, "b": 1.0}, &tg)
	var de *DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, `unknown key "b" in target (it takes label, exact)`, de.Message("target"), "a map's keys are looked at sorted")
	assert.Equal(t, reflect.TypeFor[strictTarget](), de.Type)
	assert.Equal(t, reflect.TypeFor[strictTarget](), de.In)
	assert.Equal(t, `capnweb: unknown key "b" in value (it takes label, exact)`, de.Error())

	var o strictOptions
	err = Decode(NewObject("target", NewObject("label", true)), &o)
	require.True(t, errors.As(err, &de))
	assert.Equal(t, ".target.label", de.Path)
	assert.Equal(t, reflect.TypeFor[strictTarget](), de.In, "the innermost struct")
	assert.Equal(t, reflect.TypeFor[strictOptions](), de.Type)
	n := 7
	require.NoError(t, Decode(nil, &n))
	assert.Equal(t, 7, n, "null leaves the value as it was")

	var arr [2]int
	err = Decode([]any{1.0}, &arr)
	require.True(t, errors.As(err, &de))
	assert.Equal(t, "value must be a list of 2, not a list of 1", de.Message("value"))
	require.Error(t, Decode(1.0, tg))
}

// A refusal's fields cross the bridge as the error's properties: where the
// value is, and the key and the keys taken, the closest of them when one is
// near, or what the value had to be and is.
func TestDecodeErrorProps(t *testing.T) {
	CheckLeaks(t)
	api := &fieldsAPI{}
	_, main := sessionPair(t, api, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		args []any
		want map[string]any
	}{
		{[]any{NewObject("timout", 1.0)}, map[string]any{"argument": 1.0, "path": "", "key": "timout",
			"takes": []any{"dryRun", "timeout", "seq", "parts", "modifiers", "target", "any"}, "closest": "timeout"}},
		{[]any{NewObject("target", NewObject("Lable", "x"))}, map[string]any{"argument": 1.0, "path": ".target", "key": "Lable",
			"takes": []any{"label", "exact"}, "closest": "label"}},
		{[]any{NewObject("zzzzzz", 1.0)}, map[string]any{"argument": 1.0, "path": "", "key": "zzzzzz",
			"takes": []any{"dryRun", "timeout", "seq", "parts", "modifiers", "target", "any"}}},
		{[]any{nil, NewObject("label", 5.0)}, map[string]any{"argument": 2.0, "path": ".label", "want": "a string", "got": "a number"}},
		{[]any{NewObject("modifiers", []any{"Shift", true})}, map[string]any{"argument": 1.0, "path": ".modifiers[1]", "want": "a string", "got": "a boolean"}},
	} {
		_, err := main.CallMethod(ctx, "act", c.args...)
		var re *RemoteError
		if assert.ErrorAs(t, err, &re) {
			assert.Equal(t, c.want, re.Props, re.Message)
		}
	}
}

// fieldsAPI refuses with the refusal's own properties.
type fieldsAPI struct{}

func (fieldsAPI) Act(o strictOptions, t strictTarget) {}

func (fieldsAPI) ArgError(method string, err *DecodeError) error {
	return Errorf(NameTypeError, err.Props(), "%s", err.Message("x"))
}

// Closest forgives case, one slip per two letters of the key, and a swap of
// neighbours as one; a key far from every key, or long, has none.
func TestDecodeErrorClosest(t *testing.T) {
	takes := []string{"waitUntil", "timeout", "dryRun", "role", "label", "modifiers"}
	for key, want := range map[string]string{
		"timout": "timeout", "timeOut": "timeout", "waitUnitl": "waitUntil", "dryrun": "dryRun", "rol": "role",
		"lable": "label", "modifier": "modifiers", "zzzzzz": "", "x": "", "": "",
		strings.Repeat("timeout", 20): "",
	} {
		assert.Equal(t, want, (&DecodeError{Key: key, Takes: takes}).Closest(), key)
	}
	assert.Equal(t, "", (&DecodeError{Want: "a string", Got: "a number", Takes: takes}).Closest())
	// The bound counts characters: 64 of them may still be a typo (of a
	// long key), however many bytes they take, and the 65th makes none.
	long := strings.Repeat("É", maxTypo-1) + "x"
	assert.Equal(t, long, (&DecodeError{Key: strings.ToLower(long), Takes: []string{long}}).Closest())
	assert.Equal(t, "", (&DecodeError{Key: long + "x", Takes: []string{long}}).Closest())
}

// A peer's key of megabytes is refused by its length alone: no copy of it
// is made to find a near key.
func TestDecodeErrorClosestOfLongKeyIsCheap(t *testing.T) {
	e := &DecodeError{Key: strings.Repeat("Timeout", 1<<20/7), Takes: []string{"timeout"}}
	assert.Zero(t, testing.AllocsPerRun(3, func() { e.Closest() }))
}

func BenchmarkDecodeErrorClosest(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		e := &DecodeError{Key: strings.Repeat("É", size.bytes/2), Takes: []string{"timeout", "waitUntil"}}
		b.Run(size.name, func(b *testing.B) {
			for b.Loop() {
				e.Closest()
			}
		})
	}
}
