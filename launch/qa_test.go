package launch

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
)

func checksByName(r QAResult) map[string]QACheck {
	m := map[string]QACheck{}
	for _, c := range r.Checks {
		m[c.Name] = c
	}
	return m
}

func TestQAPasses(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	tab := newTab(t, serve("/qa/ok", `<title>QA ok</title><main><h1 id=hello>Explorer</h1></main><script>console.log("fine")</script>`))
	shot := filepath.Join(t.TempDir(), "shot.png")
	r, err := QA(ctx, tab, QAOptions{
		ExpectedText: "Explorer", ExpectedSelector: "main #hello",
		CheckConsole: true, CheckErrors: true, ScreenshotPath: shot,
	})
	require.NoError(t, err)
	assert.True(t, r.Pass, "%+v", r.Checks)
	assert.Len(t, r.Checks, 5)
	for _, c := range r.Checks {
		assert.True(t, c.Pass, c.Name)
	}
	assert.Equal(t, "QA ok", r.Title)
	assert.Contains(t, r.URL, "/qa/ok")
	assert.Empty(t, r.ConsoleErrors)
	assert.Empty(t, r.Exceptions)
	assert.Equal(t, shot, r.Screenshot)
	png, err := os.ReadFile(shot)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")))

	// Text that appears later passes with a wait, fails without.
	late := newTab(t, serve("/qa/late", `<body><script>setTimeout(() => { document.body.innerHTML = "<p class=late>Ready now</p>" }, 300)</script>`))
	r, err = QA(ctx, late, QAOptions{ExpectedText: "Ready now", ExpectedSelector: "p.late", Wait: 5 * time.Second})
	require.NoError(t, err)
	assert.True(t, r.Pass, "%+v", r.Checks)
}

func TestQAFails(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	// Errors happen before QA starts: they come from the browser's history
	// of the document, not from a listener attached afterwards.
	tab := newTab(t, serve("/qa/bad", `<title>QA bad</title><p>Something else</p><script>
		console.error("failed to load", 42);
		console.assert(1 === 2, "math broke");
		setTimeout(() => { throw new TypeError("boom") }, 0);
	</script>`))
	require.NoError(t, tab.WaitFor(ctx, cdp.Predicate(`() => new Promise(r => setTimeout(() => r(true), 50))`)))
	r, err := QA(ctx, tab, QAOptions{
		ExpectedText: "Explorer", ExpectedSelector: "#missing",
		CheckConsole: true, CheckErrors: true,
		ScreenshotPath: filepath.Join(t.TempDir(), "no-such-dir", "shot.png"),
	})
	require.NoError(t, err)
	assert.False(t, r.Pass)
	c := checksByName(r)
	assert.False(t, c["text"].Pass)
	assert.Contains(t, c["text"].Detail, `"Explorer"`)
	assert.False(t, c["selector"].Pass)
	assert.False(t, c["console"].Pass)
	assert.Contains(t, c["console"].Detail, "2 console error(s)")
	assert.Equal(t, []string{"failed to load 42", "math broke"}, r.ConsoleErrors)
	assert.False(t, c["errors"].Pass)
	require.Len(t, r.Exceptions, 1)
	assert.Contains(t, r.Exceptions[0], "boom")
	assert.False(t, c["screenshot"].Pass)
	assert.Empty(t, r.Screenshot)
	assert.Equal(t, "QA bad", r.Title)

	// The tab itself is undisturbed.
	v, err := tab.Evaluate(ctx, `() => document.title`)
	require.NoError(t, err)
	assert.JSONEq(t, `"QA bad"`, string(v))

	// A wait that runs out fails the check; it is not an error.
	r, err = QA(ctx, tab, QAOptions{ExpectedSelector: "#never", Wait: 200 * time.Millisecond})
	require.NoError(t, err)
	assert.False(t, r.Pass)
	assert.Contains(t, r.Checks[0].Detail, "after 200ms")

	_, err = QA(ctx, tab, QAOptions{})
	assert.ErrorIs(t, err, ErrValidation)
	_, err = QA(ctx, tab, QAOptions{ExpectedSelector: "div[[["})
	assert.ErrorIs(t, err, ErrValidation)
	_, err = QA(ctx, tab, QAOptions{ExpectedText: "x", Wait: -time.Second})
	assert.ErrorIs(t, err, ErrValidation)
}
