package cdp

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const evidencePage = `<title>evidence</title>
<main><h1>Sign up</h1>
<label>Secret word <input id=w></label>
<div contenteditable=true role=textbox aria-label="Notes"></div>
<button>Send</button></main>`

// Evidence gives a small JPEG and an outline that names the page's
// controls and never what was typed into them.
func TestEvidence(t *testing.T) {
	const secret = "zebra-quartz-41"
	tab := newTab(t, serve("/evidence", evidencePage))
	ctx := tctx(t, 20*time.Second)
	_, err := tab.Fill(ctx, Locator{Label: "Secret word"}, secret, FormOptions{})
	require.NoError(t, err)
	_, err = tab.Fill(ctx, Locator{Label: "Notes"}, secret, FormOptions{})
	require.NoError(t, err)

	ev, err := tab.Evidence(ctx, EvidenceOptions{MaxWidth: 200})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(ev.JPEG), "\xff\xd8\xff"), "a JPEG")
	require.Contains(t, ev.Outline, `heading "Sign up"`)
	require.Contains(t, ev.Outline, `textbox "Secret word"`)
	require.Contains(t, ev.Outline, `button "Send"`)
	require.NotContains(t, ev.Outline, secret)
	require.NotContains(t, string(ev.JPEG), secret)
	require.Equal(t, site.URL+"/evidence", tab.Address())
}

// Evidence is refused on a document outside the tab's sites.
func TestEvidenceRefusedOutsideSites(t *testing.T) {
	tab := tabWith(t, "", TabOptions{Sites: []string{"example.test"}})
	ev, err := tab.Evidence(tctx(t, 20*time.Second), EvidenceOptions{})
	require.True(t, refused(err), "%v", err)
	require.Nil(t, ev.JPEG)
	require.Empty(t, ev.Outline)
}
