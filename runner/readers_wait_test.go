package runner_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/internal/testenv"
)

// A reader with no timeout of its own waits for its target as long as an
// action does (an element added after 6 s, past the old 5 s default,
// is read), and several matches fail ambiguous at once instead of using
// up the wait: real deno, the bridge, Chromium.
func TestReadersWaitLikeActionsAndFailAmbiguousAtOnce(t *testing.T) {
	t.Parallel() // see parallel_test.go
	srv := httptest.NewServer(testenv.LoopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<title>slow</title><p class=dup>one</p><p class=dup>two</p><div id=later></div>
<script>setTimeout(() => { document.getElementById("later").innerHTML = "<span id=slow>arrived</span>" }, 6000)</script>`)
	})))
	t.Cleanup(srv.Close)
	e := newBrowserEnvWith(t, envOptions{site: srv})
	entry := e.run(t, "readers.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
const timed = async (f: () => Promise<unknown>) => {
  const start = Date.now();
  try { return { ok: await f(), ms: Date.now() - start }; }
  catch (err) { return { code: (err as { code: string }).code, message: (err as Error).message, ms: Date.now() - start }; }
};
const out: Record<string, unknown> = {};
out.slow = await timed(() => tab.text({ selector: "#slow" }));
out.ambiguous = await timed(() => tab.text({ selector: ".dup" }));
await context.result(out);
`)
	type outcome struct {
		OK            any
		Code, Message string
		Ms            float64
	}
	var res map[string]outcome
	result(t, entry, &res)
	amb := res["ambiguous"]
	assert.Equal(t, "ambiguous", amb.Code, "%+v", amb)
	assert.Contains(t, amb.Message, "2 elements match")
	assert.Less(t, amb.Ms, 2000.0, "ambiguous at once, not after the wait")
	slow := res["slow"]
	assert.Equal(t, "arrived", slow.OK, "%+v", slow)
	assert.Greater(t, slow.Ms, 5000.0)
	t.Logf("ambiguous after %.0f ms; the slow element read after %.0f ms", amb.Ms, slow.Ms)
}
