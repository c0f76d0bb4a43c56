package hosttest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/internal/testenv"
)

// realScript is a Script over the tools the tests find, sharing deno's
// module cache.
func realScript(t *testing.T, s hosttest.Script) hosttest.Script {
	t.Helper()
	s.Deno, s.Chromium, s.CacheDir = testenv.Deno(t), testenv.Chromium(t), testenv.DenoCacheDir(t)
	if s.Timeout == 0 {
		s.Timeout = time.Minute
	}
	return s
}

// pickSource is testdata/pick.ts, the script that opens the second
// product's page and returns its heading; wrongNth makes it open the third.
func pickSource(t *testing.T, wrongNth bool) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "pick.ts"))
	require.NoError(t, err)
	if wrongNth {
		s := strings.Replace(string(src), "nth: 1", "nth: 2", 1)
		require.NotEqual(t, string(src), s)
		return s
	}
	return string(src)
}

func TestRunScriptOnServedPages(t *testing.T) {
	testenv.CheckGoroutines(t)
	res := hosttest.Run(t, realScript(t, hosttest.Script{
		Path: filepath.Join("testdata", "pick.ts"), Pages: os.DirFS("testdata/pages"), Approve: true,
	}))
	require.Equal(t, history.StateSucceeded, res.Entry.State, res.Explain())
	assert.JSONEq(t, `"Coffee"`, string(res.Entry.Result))
	require.Len(t, res.Prompts, 1, "the test gave consent once")
	require.NotNil(t, res.Trace)
	var methods []string
	for _, a := range res.Entry.Actions {
		methods = append(methods, a.Method+" "+a.Outcome)
	}
	assert.Contains(t, methods, "click ok")
	assert.Contains(t, res.Explain(), "item.html")
}

// The second product's link in testdata/pages/index.html, and the same
// link with a click handler that sends the browser to another page: a
// mistake the fake host cannot see.
const (
	coffeeLink      = `<a href="item.html?name=Coffee">`
	redirectingLink = `<a href="item.html?name=Coffee" onclick="location.href = 'item.html?name=Sold%20out'; return false">`
)

// redirectingPages is testdata/pages with the Coffee link redirecting in
// JavaScript.
func redirectingPages(t *testing.T) fs.FS {
	t.Helper()
	pages := fstest.MapFS{}
	for _, name := range []string{"index.html", "item.html"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pages", name))
		require.NoError(t, err)
		pages[name] = &fstest.MapFile{Data: data}
	}
	index := string(pages["index.html"].Data)
	pages["index.html"].Data = []byte(strings.Replace(index, coffeeLink, redirectingLink, 1))
	require.NotEqual(t, index, string(pages["index.html"].Data), "index.html has no %s", coffeeLink)
	return pages
}

// TestRealHostCatchesWhatTheFakeCannot runs the pick script where the
// fake host sees nothing wrong (TestGuideRealKit runs the fake test on
// both): with the wrong nth it opens the third product, and on a page
// whose link redirects in JavaScript it lands elsewhere. Against real
// Chromium both runs return the wrong heading, and the explanation shows
// where the tab went.
func TestRealHostCatchesWhatTheFakeCannot(t *testing.T) {
	testenv.CheckGoroutines(t)
	for _, c := range []struct {
		name     string
		wrongNth bool
		pages    func(*testing.T) fs.FS
		got      string
	}{
		{"wrong nth", true, func(*testing.T) fs.FS { return os.DirFS("testdata/pages") }, "Cocoa"},
		{"javascript redirect", false, redirectingPages, "Sold out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{
				Source: pickSource(t, c.wrongNth), Pages: c.pages(t), Approve: true,
			}))
			require.NoError(t, err)
			require.Equal(t, history.StateSucceeded, res.Entry.State, res.Explain())
			assert.NotEqual(t, `"Coffee"`, string(res.Entry.Result), "the real browser opened the product the test expects")
			assert.JSONEq(t, `"`+c.got+`"`, string(res.Entry.Result))
			t.Logf("what a failing test would show:\n%s", res.Explain())
		})
	}
}

// TestRunScriptExplainsAFailedCall: a run whose click finds nothing ends
// failed, and Explain shows the failed call with its code and what the
// page held when it failed, from the trace. The click's timeout leaves a
// busy machine time for one whole lookup: one still under way when it
// runs out says the browser did not answer, which is true but not this
// test's case (seen at 500 ms beside a whole make test).
func TestRunScriptExplainsAFailedCall(t *testing.T) {
	testenv.CheckGoroutines(t)
	res, err := hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{
		Source: `// @permissions browser forms
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.click({ role: "link", name: "Checkout" }, { timeout: 2000 });
`,
		Pages: os.DirFS("testdata/pages"), Approve: true,
	}))
	require.NoError(t, err)
	require.Equal(t, history.StateFailed, res.Entry.State, res.Explain())
	text := res.Explain()
	assert.Regexp(t, `tab\.click role "link" name "Checkout" at http://127\.0\.0\.1:\d+/ \([\d.]+m?s\): not_found`, text)
	assert.Contains(t, text, "the page when call 2 failed:")
	assert.Contains(t, text, `link "Details"`, "the page's outline")
	t.Logf("%s", text)
}

// TestRunScriptRefusedWithoutConsent: a test that does not approve gets
// the run the app records when the user says no.
func TestRunScriptRefusedWithoutConsent(t *testing.T) {
	testenv.CheckGoroutines(t)
	res, err := hosttest.RunScript(t.Context(), realScript(t, hosttest.Script{Path: filepath.Join("testdata", "pick.ts")}))
	require.NoError(t, err)
	assert.Equal(t, history.StateRefused, res.Entry.State, res.Explain())
	assert.Len(t, res.Prompts, 1)
	assert.Empty(t, res.Site)
	_, err = hosttest.RunScript(t.Context(), hosttest.Script{})
	assert.ErrorIs(t, err, hosttest.ErrBadScript)
}
