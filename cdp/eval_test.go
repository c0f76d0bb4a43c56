package cdp

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
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
	for _, judged := range []bool{false, true} {
		t.Run(map[bool]string{false: "self-judged", true: "judged"}[judged], func(t *testing.T) {
			testEvaluateResultByType(t, judged)
		})
	}
}

// testEvaluateResultByType evaluates on the document's judge, or with the
// judge in the call as the first in a document does.
func testEvaluateResultByType(t *testing.T, judged bool) {
	tab := newTab(t, serve("/eval-types", `<p id=x>hi</p>`))
	ctx := tctx(t, 30*time.Second)
	if _, err := tab.Evaluate(ctx, `() => 0`); err != nil {
		t.Fatal(err)
	}
	evaluate := func(ctx context.Context, fn string) (json.RawMessage, error) {
		if !judged {
			forgetJudge(tab)
		}
		return tab.Evaluate(ctx, fn)
	}
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
		got, err := evaluate(ctx, fn)
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
		`() => { let o = {}; for (let i = 0; i < 5000; i++) o = {o}; return o }`, // too deep to send
		`() => [new Proxy({}, {ownKeys() { throw new Error("trap") }})]`,
	} {
		_, err := evaluate(ctx, fn)
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
		_, err := evaluate(ctx, fn)
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

// replyCounter is a meter that counts the replies a tab's page calls take.
type replyCounter struct{ n atomic.Int64 }

func (m *replyCounter) Left() int64              { return 1 << 30 }
func (m *replyCounter) Take(int64, string) error { m.n.Add(1); return nil }
func (m *replyCounter) Give(int64)               {}

// An evaluation is one call into the page whatever it gives: a number,
// data, no data, a promise's value or an exception. (Judging the result
// by a second call cost an object a second round trip.) The first in a
// document also makes the document's judge, in a call sent beside it.
func TestEvaluateOneCall(t *testing.T) {
	m := &replyCounter{}
	tab := newTabWith(t, serve("/eval-one", `<p id=x>hi</p>`), TabOptions{Meter: m})
	ctx := tctx(t, 30*time.Second)
	_, err := tab.Evaluate(ctx, `() => 1`)
	require.NoError(t, err)
	assert.Equal(t, int64(2), m.n.Load(), "the first call and the judge's")
	for _, fn := range []string{
		`(a, b) => a + b`,
		`() => ({a: [1, "two"], b: {c: true}})`,
		`async () => ({late: 1})`,
		`() => document.body`,
		`() => ({when: new Date(0)})`,
		`() => { throw new Error("x") }`,
	} {
		before := m.n.Load()
		_, _ = tab.Evaluate(ctx, fn, 1, 2)
		assert.Equal(t, int64(1), m.n.Load()-before, fn)
	}
}

// The wrapper that judges the result in the page moves no place an
// exception reports within the function (line and column as if the
// function ran alone, on its first line too), nor one in the page's own
// code, and hides nothing of the page from the function: its this, its
// arguments and the page's globals are those it had alone.
func TestEvaluateAsAlone(t *testing.T) {
	tab := newTab(t, serve("/eval-alone", `<p>x</p><script>function pageThrow() { throw new Error("page") }
var a = "page's a"; var v = "page's v";</script>`))
	ctx := tctx(t, 30*time.Second)
	for _, c := range []struct {
		fn         string
		line, col  int
		name, text string
	}{
		{`() => { throw new Error("a") }`, 1, 10, "Error", "a"},
		{"() => {\n  throw new Error(\"b\")\n}", 2, 3, "Error", "b"},
		{`() => { throw "s" }`, 1, 10, "", `"s"`},
		{"async () => {\n await 0;\n throw new TypeError(\"c\") }", 4, 9, "TypeError", "c"},
		{`async () => { throw new Error("d") }`, 2, 23, "Error", "d"},
		{`() => Promise.reject(new Error("r"))`, 2, 24, "Error", "r"},
		{`() => Promise.reject(5)`, 1, 1, "", "5"},
		{`() => { null.x }`, 1, 15, "TypeError", "Cannot read properties of null (reading 'x')"},
		{`() => { syntax error here`, 1, 17, "SyntaxError", "Unexpected identifier 'error'"},
		{`() => pageThrow()`, 1, 40, "Error", "page"},
	} {
		// The first call in a document carries the judge, the next runs
		// on the judge it made.
		for _, judged := range []bool{false, true} {
			if !judged {
				forgetJudge(tab)
			}
			_, err := tab.Evaluate(ctx, c.fn)
			var ee *EvalError
			require.ErrorAs(t, err, &ee, c.fn)
			assert.Equal(t, [4]any{c.name, c.text, c.line, c.col}, [4]any{ee.Name, ee.Message, ee.Line, ee.Column}, "%s judged=%v", c.fn, judged)
		}
	}
	for fn, want := range map[string]string{
		`function () { return this === window }`:              `true`,
		`() => this === window`:                               `true`,
		`function (x, y) { return [arguments.length, x, y] }`: `[2,1,"two"]`,
		`() => [a, v]`:           `["page's a","page's v"]`,
		`() => typeof __proto__`: `"object"`,
		`(...r) => r`:            `[1,"two"]`,
	} {
		for _, judged := range []bool{false, true} {
			if !judged {
				forgetJudge(tab)
			}
			got, err := tab.Evaluate(ctx, fn, 1, "two")
			require.NoError(t, err, fn)
			assert.JSONEq(t, want, string(got), "%s judged=%v", fn, judged)
		}
	}
	// A page that replaces Promise (as zone.js does) still has its
	// functions' promises awaited, and an object with a then method is
	// awaited as the browser awaits it.
	_, err := tab.Evaluate(ctx, `() => { window.Promise = function FakePromise() {} }`)
	require.NoError(t, err)
	got, err := tab.Evaluate(ctx, `async () => { await null; return {late: [1]} }`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"late":[1]}`, string(got))
	got, err = tab.Evaluate(ctx, `() => ({then(ok) { ok({via: "then"}) }})`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"via":"then"}`, string(got))
}

// forgetJudge has the next evaluation in tab's document carry the judge,
// as the first in a document does.
func forgetJudge(tab *Tab) {
	tab.frames.mu.Lock()
	j := tab.frames.realms.judge
	tab.frames.mu.Unlock()
	tab.forgetJudge(j)
}
