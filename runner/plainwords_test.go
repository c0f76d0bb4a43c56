package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// goWords are words of Go, of the DevTools protocol and of the bridge
// that mean nothing to a script's author and must never reach a script.
var goWords = regexp.MustCompile(`context deadline exceeded|context canceled|\bcdp[.:]|\brpcc\b|rpc error|(?i:websocket)|\bEOF\b|capnweb|\*[a-z]+\.[A-Z]\w+|\b(?:cdp|rpcc|runtime|errors|fmt|net|os|io|capnweb|runner)\.[A-Z]\w+|goroutine|panic`)

// plainSite serves pages that fail the ways real pages do: a connection
// dropped before any answer, and a page that never answers.
func plainSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<title>Form</title><label for=f>Card holder</label><input id=f><label for=e>Email</label><input id=e>`)
	})
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	})
	mux.HandleFunc("/never", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(srv.Close)
	return srv
}

// Every main kind of failure a script meets (a wait or a lookup that runs
// out, a page that cannot load, a tab closed under a call, a run the host
// cancels) reaches the script in plain words with its code: never Go's,
// the protocol's or the bridge's.
func TestScriptErrorsSpeakPlainly(t *testing.T) {
	srv := plainSite(t)
	e := newBrowserEnvWith(t, envOptions{site: srv})
	entry := e.run(t, "plain.ts", fmt.Sprintf(`// @permissions browser forms page-js
import { context, tabs } from "tranquil/automation";
const base = %q;
const tab = await tabs.active();
await tab.goto(base + "/");
const seen: Record<string, string> = {};
async function note(kind: string, f: () => Promise<unknown>) {
  try { await f(); seen[kind] = "no error"; } catch (e) { seen[kind] = (e as { code?: string }).code + " " + (e as Error).message; }
}
await note("wait timeout", () => tab.waitFor("#never", { timeout: 200 }));
await note("lookup timeout", () => tab.click({ label: "Card holdr" }, { timeout: 1500 }));
await note("read timeout", () => tab.text({ role: "button", name: "Send" }, { timeout: 300 }));
await note("navigation failed", () => tab.goto(base + "/drop"));
await note("navigation timeout", () => tab.goto(base + "/never", { timeout: 300 }));
const other = await tabs.open(base + "/", { background: true });
const pending = other.evaluate(() => new Promise(() => {})).then(() => undefined, (e) => e);
await other.close();
await note("target closed mid-call", async () => {
  const e = await pending;
  if (e) throw e;
});
await note("target closed", () => other.title());
await context.result(seen);
`, srv.URL))
	var seen map[string]string
	result(t, entry, &seen)
	want := map[string]string{
		"wait timeout":           "timeout ",
		"lookup timeout":         "not_found ",
		"read timeout":           "not_found ",
		"navigation failed":      "navigation ",
		"navigation timeout":     "timeout ",
		"target closed mid-call": "", // closed, or not_found when the close came first
		"target closed":          "not_found ",
	}
	for kind, code := range want {
		msg, ok := seen[kind]
		require.True(t, ok, kind)
		t.Logf("%s: %s", kind, msg)
		assert.True(t, strings.HasPrefix(msg, code), "%s: %s", kind, msg)
		if code == "" {
			assert.Regexp(t, `^(closed|not_found) `, msg, kind)
		}
		assert.Empty(t, goWords.FindAllString(msg, -1), "%s: %s", kind, msg)
		assert.Contains(t, msg, "plain.ts:", "%s names the script's line: %s", kind, msg)
	}
	assert.Contains(t, seen["wait timeout"], `pass a larger { timeout }`)
	assert.Contains(t, seen["lookup timeout"], `waited 1.5 s for label "Card holdr": no field with that label; the fields with labels are: <textbox> label "Card holder", <textbox> label "Email": check the target, or pass a larger { timeout } if it comes later`)

	// The host cancels a run with a call under way: the call's error, and
	// everything the run prints, stay plain.
	r := e.startScript(t, "cancelled.ts", `// @permissions browser
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
const p = tab.waitFor("#never", { timeout: 60000 }).then(() => console.log("CAUGHT none"),
  (e) => console.log("CAUGHT " + e.code + " " + e.message));
console.log("WAITING");
await p;
`)
	e.waitLine(t, r, "WAITING")
	r.Cancel("the user stopped it")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ce, err := r.Wait(ctx)
	require.NoError(t, err)
	t.Logf("cancelled: %s\n%s", ce.Reason, ce.Output)
	assert.Empty(t, goWords.FindAllString(ce.Output+ce.Reason, -1), ce.Output)
	b, _ := json.Marshal(seen)
	assert.Empty(t, goWords.FindAllString(string(b), -1))
}
