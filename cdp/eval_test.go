package cdp

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// What Evaluate's function returns is judged by what the browser says it
// is: data comes back as JSON, and a DOM node, a window, a function, a
// symbol or an object that refers to itself fails with not_serializable,
// never as an empty object or the browser's own words.
func TestEvaluateResultByType(t *testing.T) {
	tab := newTab(t, serve("/eval-types", `<p id=x>hi</p>`))
	ctx := tctx(t, 30*time.Second)
	for fn, want := range map[string]string{
		`() => ({a: [1, "two", null], b: {c: true}})`: `{"a":[1,"two",null],"b":{"c":true}}`,
		`() => [3, 2, 1]`:         `[3,2,1]`,
		`async () => ({late: 1})`: `{"late":1}`,
		`() => "text"`:            `"text"`,
		`() => null`:              `null`,
		`() => 1n`:                `"1n"`,
		`() => [1, undefined, 2]`: `[1,null,2]`, // as JSON.stringify has it
		`() => { const o = {n: 1}; return [o, o] }`: `[{"n":1},{"n":1}]`, // shared, not circular
	} {
		got, err := tab.Evaluate(ctx, fn)
		require.NoError(t, err, fn)
		assert.JSONEq(t, want, string(got), fn)
	}
	for _, fn := range []string{
		`() => document.body`,
		`() => window`,
		`() => () => 1`,
		`() => Symbol("x")`,
		`() => ({s: Symbol("y")})`,
		`() => { const a = {}; a.self = a; return a }`,
		`async () => document.querySelector("#x")`,
	} {
		_, err := tab.Evaluate(ctx, fn)
		require.ErrorIs(t, err, errcode.NotSerializable, fn)
		assert.NotContains(t, err.Error(), "Object", fn)
	}
	// Inside data, what JSON would turn into {} or lose fails too, and the
	// error says where.
	for fn, where := range map[string]string{
		`() => [1, document.body]`:                             `the result[1] is a DOM node (body)`,
		`() => ({rows: [{el: document.querySelector("#x")}]})`: `the result.rows[0].el is a DOM node (p)`,
		`() => ({when: new Date(0)})`:                          `the result.when is a Date; return date.toISOString()`,
		`() => new Map([[1, 2]])`:                              `the result is a Map`,
		`() => ({tags: new Set(["a"])})`:                       `the result.tags is a Set`,
		`() => ({n: 1n})`:                                      `the result.n is a BigInt`,
		`() => ({f() {}})`:                                     `the result.f is a function`,
		`() => ({w: [window]})`:                                `the result.w[0] is a window`,
		`() => { const a = {b: {}}; a.b.a = a; return a }`:     `the result.b.a holds itself`,
	} {
		_, err := tab.Evaluate(ctx, fn)
		require.ErrorIs(t, err, errcode.NotSerializable, fn)
		assert.Contains(t, err.Error(), where, fn)
	}
	v, err := tab.Evaluate(ctx, `() => 1`)
	require.NoError(t, err, "the tab works on")
	assert.JSONEq(t, `1`, string(v))
}

// Concurrent evaluations on one tab each read their own result: one
// freeing its objects never frees another's.
func TestEvaluateConcurrentObjects(t *testing.T) {
	tab := newTab(t, serve("/eval-many", `<p>x</p>`))
	ctx := tctx(t, 30*time.Second)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := tab.Evaluate(ctx, `async (i) => { await new Promise(r => setTimeout(r, i % 4)); return {i} }`, i)
			if err == nil && string(v) != `{"i":`+string(rune('0'+i%10))+`}` && i < 10 {
				t.Errorf("call %d got %s", i, v)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, i)
	}
}
