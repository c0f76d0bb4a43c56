package cdp

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// The judge names each kind of no data, and the way to it, in the words
// it always had, whether the call runs on the document's judge or carries
// it: the path is put into words only for a refusal, so these pin its
// spelling of indexes, identifier keys and other keys.
func TestEvaluateJudgeWords(t *testing.T) {
	tab := newTab(t, serve("/eval-judge-words", `<p id=x>hi</p>`))
	ctx := tctx(t, 60*time.Second)
	for fn, want := range map[string]string{
		`() => document.body`:                                   `the result is a DOM node (body)`,
		`() => [document.createTextNode("t")]`:                  `the result[0] is a DOM node (#text)`,
		`() => window`:                                          `the result is a window`,
		`() => () => 1`:                                         `the result is a function`,
		`() => Symbol("x")`:                                     `the result is a symbol`,
		`() => ({n: 1n})`:                                       `the result.n is a BigInt; return String(n)`,
		`() => ({when: new Date(0)})`:                           `the result.when is a Date; return date.toISOString()`,
		`() => new Map()`:                                       `the result is a Map; return Object.fromEntries(map)`,
		`() => ({"a-b": [0, {"0": new Set()}]})`:                `the result["a-b"][1]["0"] is a Set; return [...set]`,
		`() => ({$x_1: {_y: [[0, () => 0]]}})`:                  `the result.$x_1._y[0][1] is a function`,
		`() => ({"é": [new Uint8Array(2)]})`:                    `the result["é"][0] is a Uint8Array`,
		`() => ({e: new Error("x")})`:                           `the result.e is a Error`,
		`() => ({[Symbol.toStringTag]: "Foo"})`:                 `the result is a Foo`,
		`() => ({f: {get window() { throw 1 }}})`:               `the result.f is a window of another site`,
		`() => ({g: {get x() { throw new Error() }}})`:          `it could not be read`,
		`() => { const a = {b: [{}]}; a.b[0].a = a; return a }`: `the result.b[0].a holds itself (a circular object)`,
		`async () => [1, {s: Symbol("y")}]`:                     `the result[1].s is a symbol`,
	} {
		for _, judged := range []bool{false, true} {
			if !judged {
				forgetJudge(tab)
			}
			_, err := tab.Evaluate(ctx, fn)
			require.ErrorIs(t, err, errcode.NotSerializable, fn)
			msg := err.Error()
			_, why, ok := strings.Cut(msg, "cannot come back as JSON: ")
			require.True(t, ok, msg)
			why, _, _ = strings.Cut(why, ": return plain data")
			assert.Equal(t, want, why, "%s judged=%v", fn, judged)
		}
	}
	// Data passes, shared parts too. The judge looks at 100,000 objects
	// at most: past them the rest is taken as the browser sends it (a Map
	// as {}).
	got, err := tab.Evaluate(ctx, `() => { const o = {n: [1]}; return {a: o, b: [o, o]} }`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":{"n":[1]},"b":[{"n":[1]},{"n":[1]}]}`, string(got))
	const many = `(n) => { const a = []; for (let i = 0; i < n; i++) a.push([]); a.push(new Map()); return a }`
	got, err = tab.Evaluate(ctx, many, 99999)
	require.NoError(t, err, "the Map is the 100,001st object")
	assert.True(t, strings.HasSuffix(string(got), "[],{}]"), "…%s", got[max(len(got)-20, 0):])
	_, err = tab.Evaluate(ctx, many, 99998)
	require.ErrorIs(t, err, errcode.NotSerializable, "the Map is the 100,000th object")
	assert.Contains(t, err.Error(), "the result[99998] is a Map")
}
