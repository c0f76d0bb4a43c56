package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/trace"
)

// traceSite serves a sign-up page that logs to the console.
func traceSite(t testing.TB) *httptest.Server {
	t.Helper()
	srv := testenv.HTMLSite(`<title>Sign up</title><h1>Sign up</h1>
<label for=w>Secret word</label><input id=w>
<button>Send</button>
<script>console.log("trace page ready", 42)</script>`)
	t.Cleanup(srv.Close)
	return srv
}

// A real script fills a field, reads it and fails a click; its trace holds
// the calls with their outcomes, the navigation, the page's console line,
// the script's steps and progress, the failure's screenshot and outline,
// and never the value typed nor the page's query.
func TestBrowserTrace(t *testing.T) {
	const value, query = "VALUE-zq81x-quokka", "QUERY-secret-7731"
	e := newBrowserEnvWith(t, envOptions{site: traceSite(t)})
	entry := e.run(t, "traced.ts", fmt.Sprintf(`// @permissions browser forms sites=127.0.0.1
import { context, step, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("%s/signup?token=%s");
await step.do("fill the form", async () => { await tab.fill({ label: "Secret word" }, "%s"); });
context.progress("half way", 0.5);
const read = await tab.value({ label: "Secret word" });
let code = "none";
try { await tab.click({ role: "button", name: "Missing" }, { timeout: 300 }); }
catch (e) { code = (e as { code: string }).code; }
await context.result({ read, code });
`, e.site.URL, query, value))
	var res struct{ Read, Code string }
	result(t, entry, &res)
	require.Equal(t, value, res.Read)
	require.NotEqual(t, "none", res.Code)

	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	require.Equal(t, entry.ID, tr.RunID)
	page := e.site.URL + "/signup"
	byMethod := map[string]trace.Call{}
	for _, c := range tr.Calls {
		byMethod[c.Method] = c
		assert.Equal(t, page, c.Page, c.Method)
		assert.NotEmpty(t, c.Tab, c.Method)
	}
	require.Contains(t, byMethod, "tab.goto")
	require.Contains(t, byMethod, "tab.fill")
	require.Contains(t, byMethod, "tab.value")
	require.Contains(t, byMethod, "tab.click")
	assert.True(t, byMethod["tab.fill"].OK())
	assert.Equal(t, `label "Secret word"`, byMethod["tab.fill"].Target)
	assert.True(t, byMethod["tab.value"].OK())
	click := byMethod["tab.click"]
	assert.Equal(t, res.Code, click.Code, "the code the script got")
	assert.Contains(t, click.Target, "Missing")
	assert.NotEmpty(t, click.Error)
	assert.GreaterOrEqual(t, click.Duration, 250*time.Millisecond, "the click waited for its target")

	var gotos []trace.Navigation
	for _, n := range tr.Navigations {
		if n.Kind == "goto" {
			gotos = append(gotos, n)
		}
	}
	require.Len(t, gotos, 1)
	assert.Contains(t, gotos[0].URL, "/signup")

	var logged bool
	for _, l := range tr.Console {
		logged = logged || (l.Level == "log" && l.Text == "trace page ready 42")
	}
	assert.True(t, logged, "console: %+v", tr.Console)

	var steps []string
	for _, s := range tr.Steps {
		steps = append(steps, fmt.Sprintf("%s %s %s %v %.1f", s.Kind, s.Name, s.Phase, s.OK, s.Fraction))
	}
	assert.Equal(t, []string{"do fill the form start false -1.0", "do fill the form end true -1.0", "progress half way  false 0.5"}, steps)

	require.Len(t, tr.Failures, 1)
	f := tr.Failures[0]
	assert.Equal(t, click.Seq, f.Seq)
	assert.Equal(t, trace.JPEG, f.ImageType)
	assert.True(t, strings.HasPrefix(string(f.Image), "\xff\xd8\xff"))
	assert.Contains(t, f.Outline, `button "Send"`)
	assert.Contains(t, f.Outline, `textbox "Secret word"`)
	assert.Empty(t, f.Note)

	// Neither the value nor the query is anywhere: not in the file, not
	// in the trace it decodes to.
	raw, err := e.m.History().Trace(entry.ID)
	require.NoError(t, err)
	js, err := json.Marshal(tr)
	require.NoError(t, err)
	for _, secret := range []string{value, query} {
		assert.NotContains(t, string(raw), secret)
		assert.NotContains(t, string(js), secret)
	}
	t.Logf("trace: %d calls, %d bytes stored", len(tr.Calls), len(raw))
}
