package cdp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/input"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// actionPage holds targets that become ready only later: a field added
// after load, a button under an overlay that goes away, moving buttons,
// a button enabled late and a field made editable late.
const actionPage = `<!doctype html><title>actions</title>
<style>
@keyframes slide { from { transform: translateX(0) } to { transform: translateX(240px) } }
.sliding { animation: slide 700ms linear forwards; }
#veil { position: fixed; inset: 0; background: rgba(0,0,0,.3); }
.field { position: relative; width: 220px; }
.mask { position: absolute; left: 2px; top: 2px; pointer-events: auto; background: white; }
</style>
<div id=slot></div>
<button id=under onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Under</button>
<div id=veil></div>
<p><button id=slider class=sliding onclick="this.dataset.x = event.clientX">Slider</button></p>
<p><button id=jsmover style="position:relative" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Mover</button></p>
<button id=later disabled onclick="this.dataset.n = 1">Later</button>
<label for=ro>Locked</label><input id=ro readonly>
<div class=field><label for=masked>Card</label><input id=masked><span class=mask>•••• ••••</span></div>
<button>Twin</button><button>Twin</button>
<script>
const start = performance.now();
setTimeout(() => { document.getElementById("slot").innerHTML = '<label for=late>Late field</label><input id=late>'; }, 400);
setTimeout(() => document.getElementById("veil").remove(), 500);
setTimeout(() => { document.getElementById("later").disabled = false; }, 300);
setTimeout(() => { document.getElementById("ro").readOnly = false; }, 300);
const mover = document.getElementById("jsmover");
(function step() {
  const t = performance.now() - start;
  mover.style.left = Math.min(t, 600) / 3 + "px";
  if (t < 600) requestAnimationFrame(step);
})();
</script>`

// evalJS runs js in the page and returns its result as JSON.
func evalJS(t *testing.T, ctx context.Context, tab *Tab, js string) string {
	t.Helper()
	v, err := tab.Evaluate(ctx, js)
	require.NoError(t, err)
	return string(v)
}

func TestActionsWaitUntilReady(t *testing.T) {
	tab := newTab(t, serve("/actions", actionPage))
	ctx := tctx(t, 30*time.Second)
	state := func(js string) string { return evalJS(t, ctx, tab, js) }

	// A field that appears after load is filled once it is there.
	st, err := tab.Fill(ctx, Locator{Label: "Late field"}, "arrived", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "arrived", st.Value)

	// The overlay takes clicks until it goes; the click waits it out.
	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Under"}, FormOptions{}))
	require.Equal(t, `"1"`, state(`() => document.getElementById("under").dataset.n`))

	// Moving targets are clicked once they hold still, where they stopped.
	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Slider"}, FormOptions{}))
	require.Equal(t, `true`, state(`() => { const b = document.getElementById("slider"), r = b.getBoundingClientRect();
		return b.getAnimations().every((a) => a.playState === "finished") && Math.abs(+b.dataset.x - (r.left + r.width / 2)) < 1; }`))
	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Mover"}, FormOptions{}))
	require.Equal(t, `"1"`, state(`() => document.getElementById("jsmover").dataset.n`))

	// Disabled and read-only targets are waited for too.
	require.NoError(t, tab.ClickElement(ctx, Locator{Text: "Later"}, FormOptions{}))
	require.Equal(t, `"1"`, state(`() => document.getElementById("later").dataset.n`))
	st, err = tab.Fill(ctx, Locator{Label: "Locked"}, "open now", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "open now", st.Value)

	// The field's own mask over it is part of the field, not an overlay.
	st, err = tab.Fill(ctx, Locator{Label: "Card"}, "4242", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "4242", st.Value)
}

func TestActionsFailAtDeadlineWithLastReason(t *testing.T) {
	tab := newTab(t, serve("/actions-deadline", `<!doctype html>
<label for=f>Covered field</label><input id=f>
<button id=b>Covered</button><button id=off disabled>Off</button>
<label for=ro>Frozen</label><input id=ro readonly>
<div style="position:fixed;inset:0" id=shield></div>
<button>Twin</button><button>Twin</button>`))
	wait := 600 * time.Millisecond
	cases := []struct {
		name string
		do   func(ctx context.Context) error
		want error
		what string
	}{
		{"missing", func(ctx context.Context) error {
			_, err := tab.Fill(ctx, Locator{Label: "No such field"}, "x", FormOptions{})
			return err
		}, errcode.NotFound, ""},
		{"obscured click", func(ctx context.Context) error { return tab.ClickElement(ctx, Locator{Selector: "#b"}, FormOptions{}) }, errcode.Obscured, `id="shield"`},
		{"obscured fill", func(ctx context.Context) error {
			_, err := tab.Fill(ctx, Locator{Selector: "#f"}, "x", FormOptions{})
			return err
		}, errcode.Obscured, `id="shield"`},
		{"disabled", func(ctx context.Context) error {
			return tab.ClickElement(ctx, Locator{Selector: "#off"}, FormOptions{})
		}, errcode.Disabled, ""},
		{"read-only", func(ctx context.Context) error {
			_, err := tab.Fill(ctx, Locator{Selector: "#ro"}, "x", FormOptions{})
			return err
		}, errcode.Readonly, ""},
	}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		t0 := time.Now()
		err := c.do(ctx)
		took := time.Since(t0)
		cancel()
		require.ErrorIs(t, err, c.want, c.name)
		require.NotErrorIs(t, err, context.DeadlineExceeded, c.name)
		require.GreaterOrEqual(t, took, wait-50*time.Millisecond, "%s: it waited for the deadline", c.name)
		require.Less(t, took, wait+2*time.Second, c.name)
		var te *LocatorError
		require.ErrorAs(t, err, &te)
		require.Greater(t, te.Waited, wait/2, c.name)
		require.Contains(t, err.Error(), "waited", c.name)
		if c.what != "" {
			require.Contains(t, err.Error(), c.what, c.name)
		}
	}

	// Ambiguity does not pass with time: it fails at once.
	ctx := tctx(t, 10*time.Second)
	t0 := time.Now()
	err := tab.ClickElement(ctx, Locator{Text: "Twin"}, FormOptions{})
	require.ErrorIs(t, err, errcode.Ambiguous)
	require.Less(t, time.Since(t0), 2*time.Second)
}

// A page that slips something under the pointer between the check and the
// press (here on the pointer's arrival) never gets that press: the click is
// held back and tried again once the target is clear. A frame slipped over
// it takes the press into its own document, where the target document's
// check never sees it: that is a miss too, not a click reported done that
// the target never got.
func TestClickHeldBackWhenThePageMovesFirst(t *testing.T) {
	for _, c := range []struct{ over, make, seen string }{
		{"button", `const c = document.createElement("button"); c.textContent = "Buy now"; c.onclick = () => { window.buys++; };`,
			`[window.dels || 0, window.buys, window.overDowns || 0]`},
		{"iframe", `const c = document.createElement("iframe"); c.srcdoc = "<body style='margin:0'>over</body>";`,
			`[window.dels || 0, window.buys, 0]`},
	} {
		t.Run(c.over, func(t *testing.T) {
			url := serve("/click-swap-"+c.over, `<!doctype html><body style="margin:0">
<button id=del style="position:absolute;left:20px;top:20px;width:120px;height:40px" onclick="window.dels = (window.dels || 0) + 1">Delete draft</button>
<script>
window.buys = 0;
document.getElementById("del").addEventListener("mousemove", () => {
  if (window.swapped) return;
  window.swapped = true;
  `+c.make+`
  c.style.cssText = "position:absolute;left:0;top:0;width:200px;height:100px;border:0";
  c.onmousedown = () => { window.overDowns = (window.overDowns || 0) + 1; };
  document.body.append(c);
  setTimeout(() => c.remove(), 400);
});
</script>`)
			tab := newTab(t, url)
			ctx := tctx(t, 20*time.Second)
			require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Delete draft"}, FormOptions{}))
			raw, err := tab.Evaluate(ctx, `() => `+c.seen+`.concat(!!window.swapped)`)
			require.NoError(t, err)
			require.JSONEq(t, `[1, 0, 0, true]`, string(raw))
		})
	}
}

// Something the page puts over the target between the press and the
// release (a list animating closed over a button) would take the release,
// and the browser would send the click to what the two have in common: the
// target never clicked, and the action reported done. The release and the
// click are held back, and the click is made again once the target is
// clear.
func TestClickReleaseHeldBackWhenThePageCoversTheTarget(t *testing.T) {
	url := serve("/click-cover-on-press", `<!doctype html><body style="margin:0">
<button id=send style="position:absolute;left:20px;top:20px;width:120px;height:40px" onclick="window.sends = (window.sends || 0) + 1">Send</button>
<script>
window.overUps = 0; window.bodyClicks = 0;
document.body.addEventListener("click", (e) => { if (e.target === document.body) window.bodyClicks++; });
document.getElementById("send").addEventListener("mousedown", () => {
  if (window.covered) return;
  window.covered = true;
  const c = document.createElement("div");
  c.style.cssText = "position:absolute;left:0;top:0;width:200px;height:100px;background:#eef";
  c.onmouseup = c.onclick = () => { window.overUps++; };
  document.body.append(c);
  setTimeout(() => c.remove(), 400);
});
</script>`)
	tab := newTab(t, url)
	ctx := tctx(t, 20*time.Second)
	require.NoError(t, tab.ClickElement(ctx, Locator{Role: "button", Name: "Send"}, FormOptions{}))
	raw, err := tab.Evaluate(ctx, `() => [window.sends || 0, window.overUps, window.bodyClicks, !!window.covered]`)
	require.NoError(t, err)
	require.JSONEq(t, `[1, 0, 0, true]`, string(raw), "[target's clicks, the cover's releases and clicks, clicks sent to the body, covered]")
}

// A hover is judged by where the pointer arrived: something put over the
// target between the check and the move (an overlay, a frame, which takes
// the pointer into its own document) makes it a miss, tried again; what
// the page does in answer to the arrival (a menu over its own trigger) is
// the hover working.
func TestHoverLandsWhereThePointerArrived(t *testing.T) {
	url := serve("/hover-arrival", `<!doctype html><body style="margin:0">
<button id=menu style="position:absolute;left:20px;top:20px;width:120px;height:40px">Menu</button>
<button id=opens style="position:absolute;left:20px;top:200px;width:120px;height:40px">Opens</button>
<script>
function cover(kind) {
  const c = document.createElement(kind);
  if (kind === "iframe") c.srcdoc = "<body style='margin:0'>over</body>";
  c.className = "cover";
  c.style.cssText = "position:absolute;left:0;top:0;width:200px;height:100px;border:0;background:#fee";
  document.body.append(c);
}
document.getElementById("opens").addEventListener("mouseenter", () => {
  const m = document.createElement("div");
  m.textContent = "menu over its trigger";
  m.style.cssText = "position:absolute;left:0;top:180px;width:200px;height:100px;background:#eef";
  document.body.append(m);
});
</script>`)
	tab := newTab(t, url)
	ctx := tctx(t, 20*time.Second)
	away := func() {
		require.NoError(t, tab.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", 600, 500)))
	}
	for _, kind := range []string{"div", "iframe"} {
		away()
		el, err := tab.forms.waitReady(ctx, Locator{Selector: "#menu"}, need{Act: "hover", Guard: true})
		require.NoError(t, err)
		_, err = tab.Evaluate(ctx, fmt.Sprintf(`() => cover(%q)`, kind))
		require.NoError(t, err)
		require.NoError(t, tab.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", el.X, el.Y)))
		err = tab.forms.formCallIn(ctx, el.frame, "#menu", nil, "hoverLanded")
		require.ErrorIs(t, err, errcode.Obscured, "a %s put over the target after the check", kind)
		_, err = tab.Evaluate(ctx, `() => document.querySelectorAll(".cover").forEach((c) => c.remove())`)
		require.NoError(t, err)
	}
	away()
	require.NoError(t, tab.Hover(ctx, Locator{Selector: "#menu"}, ClickOptions{}))
	require.NoError(t, tab.Hover(ctx, Locator{Selector: "#opens"}, ClickOptions{}), "a menu the arrival opened over the trigger")
}
