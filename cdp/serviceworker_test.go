package cdp

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveWorkerSite serves, under prefix, a page and a service worker that
// answers that page with its own.
func serveWorkerSite(prefix string) (page string) {
	pages.HTML(prefix+"page", `<title>original</title>`)
	pages.Once(prefix+"worker.js", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (e) => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (e) => {
  if (new URL(e.request.url).pathname === %q) {
    e.respondWith(new Response("<title>rewritten</title>", { headers: { "Content-Type": "text/html" } }));
  }
});`, prefix+"page")
	}))
	return site.URL + prefix + "page"
}

const registerWorker = `async (prefix) => {
  const r = await navigator.serviceWorker.register(prefix + "worker.js", { scope: prefix });
  await navigator.serviceWorker.ready;
  return r.scope;
}`

// registerRefusedWorker registers as registerWorker does, for a tab that
// refuses workers: the host may unregister the worker before it is
// ready, and then ready never settles, nor may register.
const registerRefusedWorker = `async (prefix) => {
  const settled = (p) => Promise.race([p.catch(() => {}), new Promise((ok) => setTimeout(ok, 3000))]);
  await settled(navigator.serviceWorker.register(prefix + "worker.js", { scope: prefix }));
  await settled(navigator.serviceWorker.ready);
  return prefix;
}`

// titleInNewTab loads u in a tab of its own and returns what it shows.
func titleInNewTab(t *testing.T, u string) string {
	t.Helper()
	tab := newTab(t, u)
	title, err := tab.Title(tctx(t, 10*time.Second))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, tab.Close(ctx))
	return title
}

func TestServiceWorkerRefused(t *testing.T) {
	const prefix = "/sw-refused/"
	page := serveWorkerSite(prefix)
	log := &actionLog{}
	tab := tabWith(t, page, TabOptions{Log: log.add, RefuseServiceWorkers: true})
	ctx := tctx(t, 20*time.Second)
	_, err := tab.Evaluate(ctx, registerRefusedWorker, prefix)
	require.NoError(t, err)
	require.NoError(t, tab.Detach(ctx), "detaching waits for the unregistration")

	var refused []Action
	log.mu.Lock()
	for _, a := range log.list {
		if a.Method == "serviceWorker" {
			refused = append(refused, a)
		}
	}
	log.mu.Unlock()
	require.Equal(t, []Action{{Method: "serviceWorker", Target: site.URL, Site: "127.0.0.1", Outcome: "refused"}}, refused)
	require.Equal(t, "original", titleInNewTab(t, page), "no later page is served by the worker")
}

// TestServiceWorkerKept is the control: without the option the worker
// stays and answers later tabs, which is what the option is for.
func TestServiceWorkerKept(t *testing.T) {
	const prefix = "/sw-kept/"
	page := serveWorkerSite(prefix)
	tab := tabWith(t, page, TabOptions{})
	ctx := tctx(t, 20*time.Second)
	_, err := tab.Evaluate(ctx, registerWorker, prefix)
	require.NoError(t, err)
	require.NoError(t, tab.Detach(ctx))
	require.Equal(t, "rewritten", titleInNewTab(t, page))
	// Leave the shared profile as it was.
	clean := newTab(t, page)
	_, err = clean.Evaluate(ctx, `async () => { for (const r of await navigator.serviceWorker.getRegistrations()) await r.unregister(); }`)
	require.NoError(t, err)
}
