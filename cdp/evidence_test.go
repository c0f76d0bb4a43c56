package cdp

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// maskedPage holds text fields of every kind the evidence paints over,
// large enough that typed text shows plainly in a screenshot.
const maskedPage = `<title>masked</title>
<style>input, textarea, [contenteditable], iframe { display: block; width: 600px; height: 70px; margin: 12px;
  font: 40px monospace; color: #000; background: #fff; border: 1px solid #888; padding: 0 }</style>
<input id=pw type=password aria-label=Password>
<input id=tx aria-label=Name>
<textarea id=ta aria-label=Notes></textarea>
<div id=ce contenteditable=true role=textbox aria-label=Body></div>
<div id=host></div>
<iframe id=fr srcdoc="<style>input{font:40px monospace;width:500px;height:60px;margin:0;border:0}</style><body style=margin:0><input id=in>"></iframe>
<script>document.getElementById("host").attachShadow({ mode: "open" }).innerHTML =
  '<input style="display:block;width:600px;height:70px;margin:12px;font:40px monospace">';</script>`

// Evidence's screenshot shows no typed text: each field's box, in the
// document, a shadow root or a same-origin frame, is one flat colour,
// where a plain screenshot of the same page shows the text.
func TestEvidenceMasksTypedText(t *testing.T) {
	const secret = "WWWWMMMM8888"
	tab := newTab(t, serve("/masked", maskedPage))
	ctx := tctx(t, 20*time.Second)
	for _, l := range []string{"Password", "Name", "Notes", "Body"} {
		_, err := tab.Fill(ctx, Locator{Label: l}, secret, FormOptions{})
		require.NoError(t, err, l)
	}
	raw, err := tab.Evaluate(ctx, `(s) => {
		document.getElementById("host").shadowRoot.querySelector("input").value = s;
		const f = document.getElementById("fr");
		f.contentDocument.getElementById("in").value = s;
		document.activeElement.blur();
		const box = (r, dx = 0, dy = 0) => [r.left + dx, r.top + dy, r.width, r.height];
		const fr = f.getBoundingClientRect();
		return [
			...["pw", "tx", "ta", "ce"].map((id) => box(document.getElementById(id).getBoundingClientRect())),
			box(document.getElementById("host").shadowRoot.querySelector("input").getBoundingClientRect()),
			box(f.contentDocument.getElementById("in").getBoundingClientRect(), fr.left + f.clientLeft, fr.top + f.clientTop),
		];
	}`, secret)
	require.NoError(t, err)
	var boxes [][4]float64
	require.NoError(t, json.Unmarshal(raw, &boxes))
	require.Len(t, boxes, 6)

	plain, err := tab.Screenshot(ctx, ScreenshotOptions{})
	require.NoError(t, err)
	pimg, err := png.Decode(bytes.NewReader(plain))
	require.NoError(t, err)
	ev, err := tab.Evidence(ctx, EvidenceOptions{MaxWidth: 2000, Quality: 90})
	require.NoError(t, err)
	eimg, err := jpeg.Decode(bytes.NewReader(ev.JPEG))
	require.NoError(t, err)
	require.Equal(t, pimg.Bounds().Dy(), eimg.Bounds().Dy(), "the same scale (the plain one also holds the scrollbar)")
	for i, b := range boxes {
		// The box's inside, where the text is drawn.
		r := image.Rect(int(b[0])+4, int(b[1])+4, int(b[0]+b[2])-4, int(b[1]+b[3])-4)
		assert.Greater(t, spread(pimg, r), 100, "box %d: the plain screenshot shows the text", i)
		assert.Less(t, spread(eimg, r), 12, "box %d: the evidence shows no text", i)
	}
	require.NotContains(t, ev.Outline, secret)
}

// spread is the difference between the lightest and darkest pixel of r
// in img, in 8-bit grey levels.
func spread(img image.Image, r image.Rectangle) int {
	lo, hi := 255, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			g := int(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
			lo, hi = min(lo, g), max(hi, g)
		}
	}
	return hi - lo
}
