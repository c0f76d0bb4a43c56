package cdp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// The frames pages: a main page on 127.0.0.1 holding a same-site frame
// (same renderer) and, below the fold, a cross-site frame on localhost
// (its own renderer, a target of its own), which holds a frame back on
// 127.0.0.1 (cross-site again from its parent). Borders, margins and
// padding move each frame's viewport away from its box.
const framesOuter = `<!doctype html><title>shop</title><body style="margin:12px">
<label>Full name <input id=name></label>
<label>Notes <input id=notes-main></label>
<iframe id=same name=shipping src="/frames/same" style="margin:30px;border:7px solid;width:420px;height:240px"></iframe>
<div style="height:1400px"></div>
<iframe id=cross name=pay src="%s/frames/pay" style="border:3px solid;padding:9px;width:460px;height:320px"></iframe>
</body>`

const framesSame = `<!doctype html><body style="margin:4px">
<label>Street <input id=street></label>
<input type=checkbox id=gift aria-label="Gift wrap">
<select aria-label=Country><option>France<option>Spain</select>
<button id=apply onclick="this.textContent='Applied'">Apply</button>
<iframe srcdoc="<label>Floor <input id=floor></label>" style="height:60px"></iframe>
</body>`

const framesPay = `<!doctype html><body style="margin:20px">
<label>Card number <input id=card></label>
<label>Notes <input id=notes-pay></label>
<button onclick="document.getElementById('out').textContent = 'paid ' + document.getElementById('card').value">Pay now</button>
<div id=out></div>
<iframe src="%s/frames/nested" style="margin-left:40px;width:300px;height:90px"></iframe>
</body>`

const framesNested = `<!doctype html><label>Security code <input id=code></label>`

func framesPage() string {
	serve("/frames/same", framesSame)
	serve("/frames/nested", framesNested)
	serve("/frames/pay", fmt.Sprintf(framesPay, site.URL))
	return serve("/frames/outer", fmt.Sprintf(framesOuter, siteOther))
}

func TestFramesSearchedAndOperated(t *testing.T) {
	tab := newTab(t, framesPage())
	ctx := tctx(t, 60*time.Second)

	// The cross-site frame: typing, a click below the fold, reading back.
	st, err := tab.Fill(ctx, Locator{Label: "Card number"}, "4242 4242", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "4242 4242", st.Value)
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Pay now"}, FormOptions{}))
	require.Eventually(t, func() bool {
		s, err := tab.Text(ctx, Locator{Selector: "#out"})
		return err == nil && s == "paid 4242 4242"
	}, 5*time.Second, 50*time.Millisecond)

	// A frame inside the cross-site frame.
	_, err = tab.Fill(ctx, Locator{Label: "Security code"}, "123", FormOptions{})
	require.NoError(t, err)
	v, err := tab.Value(ctx, Locator{Selector: "#code"})
	require.NoError(t, err)
	require.Equal(t, "123", v)

	// The same-site frame: every kind of action.
	_, err = tab.Fill(ctx, Locator{Label: "Street"}, "1 Main St", FormOptions{})
	require.NoError(t, err)
	require.NoError(t, tab.Check(ctx, Locator{Role: "checkbox", Name: "Gift wrap"}, true, FormOptions{}))
	on, err := tab.Checked(ctx, Locator{Selector: "#gift"})
	require.NoError(t, err)
	require.True(t, on)
	shown, err := tab.Select(ctx, Locator{Label: "Country"}, "Spain", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Spain", shown)
	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Apply"}, FormOptions{}))
	require.Eventually(t, func() bool {
		s, err := tab.Text(ctx, Locator{Selector: "#apply"})
		return err == nil && s == "Applied"
	}, 5*time.Second, 50*time.Millisecond)

	// A frame inside the same-site frame, written by its parent: found
	// once, not once per enclosing tree.
	_, err = tab.Fill(ctx, Locator{Label: "Floor"}, "3", FormOptions{})
	require.NoError(t, err)
	el, err := tab.Resolve(ctx, Locator{Role: "combobox"})
	require.NoError(t, err, "the page's one combobox is the same-site frame's select")
	require.Contains(t, el.Element.String(), "in a frame of")

	// The main frame still works, and the page's own script sees the
	// values where they were typed.
	_, err = tab.Fill(ctx, Locator{Label: "Full name"}, "Ada", FormOptions{})
	require.NoError(t, err)
	raw, err := tab.Evaluate(ctx, `() => [document.getElementById("name").value, document.getElementById("same").contentDocument.getElementById("street").value]`)
	require.NoError(t, err)
	require.JSONEq(t, `["Ada", "1 Main St"]`, string(raw))

	// Counting adds up every frame: name, notes-main, street, gift, floor,
	// card, notes-pay, code.
	n, err := tab.Count(ctx, Locator{Selector: "input"})
	require.NoError(t, err)
	require.Equal(t, 8, n)
}

func TestFramesAmbiguityAndNarrowing(t *testing.T) {
	tab := newTab(t, framesPage())
	ctx := tctx(t, 60*time.Second)
	_, err := tab.Fill(ctx, Locator{Label: "Card number"}, "1", FormOptions{}) // waits for the frames
	require.NoError(t, err)

	_, err = tab.Fill(ctx, Locator{Label: "Notes"}, "x", FormOptions{})
	require.ErrorIs(t, err, errcode.Ambiguous)
	var te *LocatorError
	require.True(t, errors.As(err, &te))
	require.Len(t, te.Candidates, 2)
	require.Contains(t, err.Error(), "in a frame of http://localhost")

	_, err = tab.Fill(ctx, Locator{Label: "Notes", Frame: "pay"}, "by name", FormOptions{})
	require.NoError(t, err)
	_, err = tab.Fill(ctx, Locator{Selector: "#notes-pay", Frame: "/frames/pay"}, "by address", FormOptions{})
	require.NoError(t, err)
	v, err := tab.Value(ctx, Locator{Selector: "#notes-pay"})
	require.NoError(t, err)
	require.Equal(t, "by address", v)

	_, err = tab.Resolve(ctx, Locator{Label: "Notes", Frame: "no-such-frame"})
	require.ErrorIs(t, err, errcode.NotFound)
}

// sites= is judged per frame, by the frame's own document.
func TestFramesFollowSites(t *testing.T) {
	outer := framesPage()
	ctx := tctx(t, 60*time.Second)

	t.Run("only the cross-site frame allowed", func(t *testing.T) {
		tab := newTabWith(t, outer, TabOptions{Sites: []string{"localhost"}})
		_, err := tab.Fill(ctx, Locator{Label: "Card number"}, "4000", FormOptions{})
		require.NoError(t, err)
		_, err = tab.Resolve(ctx, Locator{Label: "Full name"})
		require.ErrorIs(t, err, errcode.NotFound)
		require.Contains(t, err.Error(), "not searched: 127.0.0.1")
		_, err = tab.Resolve(ctx, Locator{Label: "Security code"}) // 127.0.0.1 again, inside the allowed frame
		require.ErrorIs(t, err, errcode.NotFound)
		_, err = tab.Resolve(ctx, Locator{Label: "Floor"}) // written by a 127.0.0.1 frame
		require.ErrorIs(t, err, errcode.NotFound)
		_, err = tab.Evaluate(ctx, `() => 1`) // the main frame's world
		require.True(t, refused(err), "%v", err)
	})
	t.Run("only the main site allowed", func(t *testing.T) {
		tab := newTabWith(t, outer, TabOptions{Sites: []string{"127.0.0.1"}})
		_, err := tab.Fill(ctx, Locator{Label: "Full name"}, "Ada", FormOptions{})
		require.NoError(t, err)
		_, err = tab.Fill(ctx, Locator{Label: "Street"}, "x", FormOptions{})
		require.NoError(t, err)
		// A frame written by its allowed parent runs on the parent's origin.
		_, err = tab.Fill(ctx, Locator{Label: "Floor"}, "2", FormOptions{})
		require.NoError(t, err)
		// Wait until the cross-site frame is there, then see it refused.
		require.Eventually(t, func() bool {
			_, skipped := tab.searchFrames("")
			return len(skipped) > 0
		}, 10*time.Second, 50*time.Millisecond)
		_, err = tab.Resolve(ctx, Locator{Label: "Card number"})
		require.ErrorIs(t, err, errcode.NotFound)
		require.Contains(t, err.Error(), "not searched: localhost")
	})
}

// A frame the page adds after load is waited for like any late field.
func TestFrameAddedLater(t *testing.T) {
	serve("/frames/late-inner", `<!doctype html><label>Coupon <input></label>`)
	url := serve("/frames/late", fmt.Sprintf(`<!doctype html><p>wait</p><script>
setTimeout(() => { const f = document.createElement("iframe"); f.src = %q; document.body.append(f); }, 400);
</script>`, siteOther+"/frames/late-inner"))
	tab := newTab(t, url)
	ctx := tctx(t, 30*time.Second)
	st, err := tab.Fill(ctx, Locator{Label: "Coupon"}, "SAVE10", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "SAVE10", st.Value)
}

// A click into a frame waits while the page lays something over the
// frame, and never lands on what covers it.
func TestFrameUnderAnOverlay(t *testing.T) {
	serve("/frames/covered-inner", `<!doctype html><button onclick="document.title='hit'; this.textContent='Hit'">Go</button>`)
	url := serve("/frames/covered", fmt.Sprintf(`<!doctype html><body style="margin:0">
<iframe id=f src=%q style="border:0;width:300px;height:120px"></iframe>
<div id=cover onclick="window.coverClicks = (window.coverClicks || 0) + 1" style="position:fixed;left:0;top:0;width:400px;height:200px;background:rgba(0,0,0,.3)"></div>
</body>`, siteOther+"/frames/covered-inner"))
	tab := newTab(t, url)
	ctx := tctx(t, 30*time.Second)
	// The frame's page loads in its own process: under load, that alone
	// can take longer than the short budget below.
	_, err := tab.Text(ctx, Locator{Role: "button", Name: "Go"})
	require.NoError(t, err)

	short := tctx(t, 1500*time.Millisecond)
	err = tab.ClickElement(short, Locator{Role: "button", Name: "Go"}, FormOptions{})
	require.ErrorIs(t, err, errcode.Obscured)
	raw, err := tab.Evaluate(ctx, `() => window.coverClicks || 0`)
	require.NoError(t, err)
	require.Equal(t, "0", string(raw))

	_, err = tab.Evaluate(ctx, `() => setTimeout(() => document.getElementById("cover").remove(), 300)`)
	require.NoError(t, err)
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Go"}, FormOptions{}))
	require.Eventually(t, func() bool {
		s, err := tab.Text(ctx, Locator{Role: "button", Name: "Hit"})
		return err == nil && s == "Hit"
	}, 5*time.Second, 50*time.Millisecond)
}

// A dialog a cross-site frame opens is answered like the page's own.
func TestFrameDialog(t *testing.T) {
	serve("/frames/dialog-inner", `<!doctype html><button onclick="this.textContent = confirm('Really?') ? 'yes' : 'no'">Ask</button>`)
	url := serve("/frames/dialog", fmt.Sprintf(`<!doctype html><iframe src=%q></iframe>`, siteOther+"/frames/dialog-inner"))
	tab := newTab(t, url)
	ctx := tctx(t, 20*time.Second)
	start := time.Now()
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Ask"}, FormOptions{}))
	require.Eventually(t, func() bool {
		s, err := tab.Text(ctx, Locator{Selector: "button"})
		return err == nil && s == "no"
	}, 5*time.Second, 50*time.Millisecond)
	require.Less(t, time.Since(start), 10*time.Second)
}

// A role alone, answered from a frame's whole accessibility tree, and a
// file input in a cross-site frame.
func TestFrameRolesAndFiles(t *testing.T) {
	framesPage() // the same-site frame's page
	serve("/frames/upload", `<!doctype html><label>Receipt <input type=file id=receipt></label>`)
	url := serve("/frames/roles", fmt.Sprintf(`<!doctype html><p>main</p>
<iframe src="/frames/same"></iframe><iframe src=%q></iframe>`, siteOther+"/frames/upload"))
	tab := newTab(t, url)
	ctx := tctx(t, 30*time.Second)
	// The only checkbox of the page is in the same-site frame.
	require.NoError(t, tab.Check(ctx, Locator{Role: "checkbox"}, true, FormOptions{}))
	on, err := tab.Checked(ctx, Locator{Selector: "#gift"})
	require.NoError(t, err)
	require.True(t, on)

	f := filepath.Join(t.TempDir(), "receipt.txt")
	require.NoError(t, os.WriteFile(f, []byte("paid"), 0o600))
	require.Eventually(t, func() bool {
		n, err := tab.Count(ctx, Locator{Selector: "#receipt"})
		return err == nil && n == 1
	}, 10*time.Second, 50*time.Millisecond)
	require.NoError(t, tab.SetFiles(ctx, Locator{Label: "Receipt"}, []string{f}, FormOptions{}))
	v, err := tab.Value(ctx, Locator{Selector: "#receipt"})
	require.NoError(t, err)
	require.Contains(t, v, "receipt.txt")
}

// A frame that navigates to another site moves to a renderer of its own
// (and back): it is searched wherever it runs.
func TestFrameChangesRenderer(t *testing.T) {
	framesPage()
	url := serve("/frames/swap", `<!doctype html><iframe id=f name=f src="/frames/same"></iframe>`)
	tab := newTab(t, url)
	ctx := tctx(t, 30*time.Second)
	_, err := tab.Fill(ctx, Locator{Label: "Street"}, "same site", FormOptions{})
	require.NoError(t, err)
	for _, to := range []string{siteOther + "/frames/nested", site.URL + "/frames/same", siteOther + "/frames/nested"} {
		_, err := tab.Evaluate(ctx, `(u) => { document.getElementById("f").src = u; }`, to)
		require.NoError(t, err)
		label := "Street"
		if strings.Contains(to, "nested") {
			label = "Security code"
		}
		_, err = tab.Fill(ctx, Locator{Label: label}, "typed", FormOptions{})
		require.NoError(t, err, to)
		n, err := tab.Count(ctx, Locator{Selector: "input"})
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 1, to)
		_, err = tab.Resolve(ctx, Locator{Label: label})
		require.NoError(t, err, "one match for %s after the move to %s", label, to)
	}
}

// Closing a tab ends the sessions of its frames and the goroutines that
// watch them.
func TestFrameSessionsEndWithTheTab(t *testing.T) {
	// Chromium's idle connections to the test server keep goroutines of
	// their own; only the tabs' and the sessions' count here.
	ours := func() int {
		buf := make([]byte, 1<<22)
		n := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "automation/cdp.(*Tab)") || strings.Contains(g, "mafredri/cdp/rpcc.") {
				n++
			}
		}
		return n
	}
	before := ours()
	ctx := tctx(t, 30*time.Second)
	tab, err := sharedConn.NewTabWith(ctx, framesPage(), TabOptions{})
	require.NoError(t, err)
	_, err = tab.Resolve(ctx, Locator{Label: "Security code"}) // two levels of cross-site frames attached
	for errors.Is(err, errcode.NotFound) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		_, err = tab.Resolve(ctx, Locator{Label: "Security code"})
	}
	require.NoError(t, err)
	tab.frames.mu.Lock()
	var routes []*route
	for _, s := range tab.frames.sessions {
		routes = append(routes, s.route)
	}
	tab.frames.mu.Unlock()
	require.Len(t, routes, 2)
	require.Greater(t, ours(), before)
	require.NoError(t, tab.Close(ctx))
	for _, r := range routes {
		select {
		case <-r.gone:
		case <-time.After(5 * time.Second):
			t.Fatal("a frame's session outlived its tab")
		}
	}
	require.Eventually(t, func() bool { return ours() <= before }, 5*time.Second, 50*time.Millisecond,
		"goroutines of tabs and sessions: %d before, %d after", before, ours())
}
