package runner_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tranquil/automation/internal/testenv"
)

// changingPage changes 300 ms after it loads: a status's text, a field's
// value, a box ticked, a dialog hidden, a banner removed, rows and an
// element added.
const changingPage = `<title>Changing</title>
<p role=status>Saving…</p>
<label for=n>Name</label><input id=n value="draft">
<label><input type=checkbox id=c> Agree</label>
<div role=dialog aria-label=Confirm>Sure?</div>
<div id=banner>Welcome</div>
<ul id=rows><li class=row>1</li></ul>
<div id=later></div>
<script>
setTimeout(() => {
  document.querySelector("[role=status]").textContent = "Saved";
  document.getElementById("n").value = "final";
  document.getElementById("c").checked = true;
  document.querySelector("[role=dialog]").style.display = "none";
  document.getElementById("banner").remove();
  document.getElementById("later").innerHTML = "<span id=late>arrived</span>";
  document.getElementById("rows").insertAdjacentHTML("beforeend", "<li class=row>2</li><li class=row>3</li>");
}, 300);
</script>`

// expectSite serves changingPage at /changing, and a plain home page.
func expectSite(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/changing" {
			fmt.Fprint(w, changingPage)
			return
		}
		fmt.Fprint(w, "<title>Home</title><h1>Home</h1>")
	})
	srv := httptest.NewServer(testenv.LoopbackOnly(mux))
	t.Cleanup(srv.Close)
	return srv
}

// A script's readers wait for what the page adds, its expectations pass
// once the page changes and fail with what they last saw, and waitFor
// waits for each state: real deno, the real bridge, real Chromium.
func TestBrowserExpectAndWait(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newBrowserEnvWith(t, envOptions{site: expectSite(t)})
	entry := e.run(t, "expect.ts", `// @permissions browser
import { context, ExpectationError, tabs } from "tranquil/automation";
const tab = await tabs.active();
const out: Record<string, unknown> = {};
const outcome = async (f: () => Promise<unknown>) => {
  const start = Date.now();
  try { const v = await f(); return { ok: v ?? true, ms: Date.now() - start }; }
  catch (err) {
    const e = err as { code: string; message: string; name: string };
    return { code: e.code, message: e.message, expectationError: err instanceof ExpectationError, ms: Date.now() - start };
  }
};
const load = () => tab.goto("`+e.site.URL+`/changing");

// A reader waits for an element added after 300 ms; one with a short
// timeout fails with the reason.
await load();
out.late = await outcome(() => tab.text({ selector: "#late" }));
out.readTimeout = await outcome(() => tab.text({ selector: "#never" }, { timeout: 300 }));
out.visibleAtOnce = await outcome(() => tab.visible({ selector: "#never" }));

// Expectations that pass after the page changes.
await load();
out.text = await outcome(() => tab.expect({ role: "status" }).toHaveText("Saved"));
out.pattern = await outcome(() => tab.expect({ role: "status" }).toHaveText(/^sav(ed|ing)$/i));
out.value = await outcome(() => tab.expect({ label: "Name" }).toHaveValue("final"));
out.checked = await outcome(() => tab.expect({ label: "Agree" }).toBeChecked());
out.hidden = await outcome(() => tab.expect({ role: "dialog" }).toBeHidden());
out.count = await outcome(() => tab.expect({ selector: ".row" }).toHaveCount(3));
out.visible = await outcome(() => tab.expect({ selector: "#late" }).toBeVisible());

// Expectations that time out, saying what they last saw.
out.textFails = await outcome(() => tab.expect({ role: "status" }).toHaveText("Done", { timeout: 400 }));
out.uncheckedFails = await outcome(() => tab.expect({ label: "Agree" }).toBeChecked({ checked: false, timeout: 400 }));
out.badPattern = await outcome(() => tab.expect({ role: "status" }).toHaveText(/(?<=a)b/));

// Each waitFor state, detached and hidden after the page changes.
await load();
out.detached = await outcome(() => tab.waitFor({ selector: "#banner" }, { state: "detached", timeout: 5000 }));
out.waitHidden = await outcome(() => tab.waitFor({ role: "dialog" }, { state: "hidden", timeout: 5000 }));
out.attached = await outcome(() => tab.waitFor("#late", { state: "attached", timeout: 5000 }));
out.waitVisible = await outcome(() => tab.waitFor({ selector: "#late" }, { timeout: 5000 }));
out.waitTimeout = await outcome(() => tab.waitFor({ selector: "#late" }, { state: "hidden", timeout: 300 }));
await context.result(out);
`)
	type outcome struct {
		OK               any
		Code, Message    string
		ExpectationError bool
		Ms               float64
	}
	var res map[string]outcome
	result(t, entry, &res)

	assert.Equal(t, "arrived", res["late"].OK, "a reader waits for an element added after 300 ms")
	assert.Equal(t, "not_found", res["readTimeout"].Code, "%+v", res["readTimeout"])
	assert.GreaterOrEqual(t, res["readTimeout"].Ms, 250.0)
	assert.Less(t, res["readTimeout"].Ms, 3000.0, "the reader's own timeout, not the default")
	assert.Equal(t, false, res["visibleAtOnce"].OK, "visible answers at once")

	for _, k := range []string{"text", "pattern", "value", "checked", "hidden", "count", "visible"} {
		assert.Equal(t, true, res[k].OK, "%s: %+v", k, res[k])
	}

	tf := res["textFails"]
	assert.Equal(t, "expectation_failed", tf.Code)
	assert.True(t, tf.ExpectationError)
	assert.Contains(t, tf.Message, `expected text "Done" in role "status", last seen "Saved" (waited `)
	assert.GreaterOrEqual(t, tf.Ms, 350.0)
	uf := res["uncheckedFails"]
	assert.Equal(t, "expectation_failed", uf.Code)
	assert.Contains(t, uf.Message, `expected label "Agree" not to be checked, last seen: checked`)
	for _, m := range []string{tf.Message, uf.Message} {
		for _, word := range []string{"context", "deadline", "cdp", "Runtime.", "rpc"} {
			assert.NotContains(t, m, word, "never Go or protocol words")
		}
	}
	assert.Equal(t, "invalid", res["badPattern"].Code)
	assert.Contains(t, res["badPattern"].Message, "/(?<=a)b/")

	for _, k := range []string{"detached", "waitHidden", "attached", "waitVisible"} {
		assert.Equal(t, true, res[k].OK, "%s: %+v", k, res[k])
	}
	wt := res["waitTimeout"]
	assert.Equal(t, "timeout", wt.Code)
	assert.Regexp(t, `waited [0-9.]+ m?s for selector "#late" to be hidden;`, wt.Message)
	assert.Contains(t, wt.Message, `last seen: 1 visible element matches`)

	acts := actions(entry)
	assert.Contains(t, acts, "expect:ok@127.0.0.1")
	assert.Contains(t, acts, "expect:expectation_failed@127.0.0.1")
	assert.False(t, strings.Contains(fmt.Sprint(entry.Actions), "final"), "the log never holds what was read")
}
