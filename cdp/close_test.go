package cdp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/testenv"
)

// A page the policy refused two navigations in a row is between documents
// for a while, and the browser drops a close asked then: Close still
// closes it, and soon.
func TestCloseAfterRefusedNavigations(t *testing.T) {
	ctx := tctx(t, 60*time.Second)
	chromium := testenv.Chromium(t)
	p, err := startChromium(ctx, chromium, true, nil)
	require.NoError(t, err)
	defer p.Close()
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a denied endpoint was reached: %s", r.URL)
	}))
	defer denied.Close()
	g, err := Guard(ctx, p.Browser(), PagePolicy{Deny: []string{strings.TrimPrefix(denied.URL, "http://")},
		AllowLocal: []string{strings.TrimPrefix(site.URL, "http://")}})
	require.NoError(t, err)
	defer g.Close()
	tab, err := p.Browser().NewTab(ctx, site.URL+"/")
	require.NoError(t, err)
	for _, u := range []string{denied.URL + "/a", denied.URL + "/b"} {
		_, err := tab.Goto(ctx, u, Load)
		require.ErrorIs(t, err, errcode.NavigationBlocked)
	}
	start := time.Now()
	require.NoError(t, tab.Close(tctx(t, 10*time.Second)))
	require.Less(t, time.Since(start), 5*time.Second)
	targets, err := p.Browser().c.Target.GetTargets(ctx, nil)
	require.NoError(t, err)
	for _, ti := range targets.TargetInfos {
		require.NotEqual(t, tab.id, string(ti.TargetID), "the closed page is still open at %s", ti.URL)
	}
}
