package runner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A tab opened in the background that has sat there a second is
// screenshot all the same, promptly, and stays in the background.
func TestScreenshotOfABackgroundTabFromAScript(t *testing.T) {
	e := newBrowserEnv(t)
	entry := e.run(t, "shot.ts", `// @permissions browser
import { context, tabs } from "tranquil/automation";
const active = (await tabs.active()).id;
const tab = await tabs.open("`+e.site.URL+`/p/1", { background: true });
await new Promise((r) => setTimeout(r, 1000));
const start = Date.now();
const png = await tab.screenshot();
const full = await tab.screenshot({ fullPage: true });
await context.result({ bytes: png.length, full: full.length, ms: Date.now() - start, stillActive: (await tabs.active()).id === active });
`)
	var res struct {
		Bytes, Full int
		Ms          float64
		StillActive bool
	}
	result(t, entry, &res)
	t.Logf("%+v", res)
	assert.Greater(t, res.Bytes, 100)
	assert.Greater(t, res.Full, 100)
	assert.Less(t, res.Ms, 5000.0)
	assert.True(t, res.StillActive, "the background tab was not brought forward")
	e.tabs.mu.Lock()
	defer e.tabs.mu.Unlock()
	assert.Zero(t, e.tabs.focused, "nothing was focused through the host")
}
