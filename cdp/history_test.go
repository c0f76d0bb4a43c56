package cdp

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsoleHistory: what the page logged and threw before anyone asked
// comes back from the browser's own history, and the tab is undisturbed.
func TestConsoleHistory(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	tab := newTab(t, serve("/history", `<title>history</title><script>
		console.log("hello", 1);
		console.error("failed", {a: 1});
		setTimeout(() => { throw new TypeError("boom") }, 0);
	</script>`))
	require.NoError(t, tab.WaitFor(ctx, Predicate(`() => new Promise(r => setTimeout(() => r(true), 50))`)))
	console, thrown, err := tab.ConsoleHistory(ctx)
	require.NoError(t, err)
	require.Len(t, console, 2)
	assert.Equal(t, ConsoleMessage{Type: "log", Text: "hello 1"}, console[0])
	assert.Equal(t, "error", console[1].Type)
	assert.Contains(t, console[1].Text, "failed")
	require.Len(t, thrown, 1)
	assert.Equal(t, "TypeError", thrown[0].Name)
	assert.Equal(t, "boom", thrown[0].Message)

	v, err := tab.Evaluate(ctx, `() => document.title`)
	require.NoError(t, err)
	assert.JSONEq(t, `"history"`, string(v))
}

// TestHolds checks a condition once, as a logged page action.
func TestHolds(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	var mu sync.Mutex
	var logged []Action
	tab := newTabWith(t, serve("/holds", `<p id=here>here</p>`), TabOptions{Log: func(a Action) {
		mu.Lock()
		logged = append(logged, a)
		mu.Unlock()
	}})
	ok, err := tab.Holds(ctx, Selector("#here"))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = tab.Holds(ctx, Selector("#gone"))
	require.NoError(t, err)
	assert.False(t, ok)
	ok, err = tab.Holds(ctx, Predicate(`(id) => document.getElementById(id).textContent === "here"`, "here"))
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = tab.Holds(ctx, Predicate(`() => { throw new RangeError("no") }`))
	var ee *EvalError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "RangeError", ee.Name)
	_, err = tab.Holds(ctx, Condition{})
	require.Error(t, err)

	mu.Lock()
	defer mu.Unlock()
	var methods []string
	for _, a := range logged {
		if a.Method == "holds" {
			methods = append(methods, a.Target+" "+a.Outcome)
		}
	}
	assert.Equal(t, []string{`selector "#here" ok`, `selector "#gone" ok`, "predicate ok", "predicate eval_error"}, methods)
}
