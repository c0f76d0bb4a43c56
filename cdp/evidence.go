package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"strings"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/page"

	"github.com/tranquil/automation/errcode"
)

// EvidenceOptions bounds what [Tab.Evidence] captures. The zero value is
// usable: each zero field means its default.
type EvidenceOptions struct {
	// MaxWidth is the screenshot's largest width in pixels; a wider
	// viewport is scaled down. Zero means 800.
	MaxWidth int
	// Quality is the screenshot's JPEG quality, 1 to 100. Zero means 60.
	Quality int
	// Depth is how deep the outline goes below the document, counting
	// the wrappers it leaves out. Zero means 24.
	Depth int
	// MaxLines bounds the outline's lines. Zero means 200.
	MaxLines int
}

func (o EvidenceOptions) withDefaults() EvidenceOptions {
	if o.MaxWidth <= 0 {
		o.MaxWidth = 800
	}
	if o.Quality <= 0 || o.Quality > 100 {
		o.Quality = 60
	}
	if o.Depth <= 0 {
		o.Depth = 24
	}
	if o.MaxLines <= 0 {
		o.MaxLines = 200
	}
	return o
}

// Evidence is what a tab showed at one moment, for a trace of a failed
// action.
type Evidence struct {
	// JPEG is the visible part of the page, scaled down, with every
	// text field's box painted over: what was typed does not show.
	JPEG []byte
	// Outline is the page's accessibility tree, one node a line indented
	// by depth: its role and name. It never holds a field's value, nor
	// the text inside a text field.
	Outline string
}

// Evidence captures what the tab shows, for a trace: a small JPEG of the
// viewport and an accessibility outline. It is not a page action: it is
// not logged and waits for nothing, but the document must be one the
// tab's sites allow, before and after the capture, as for Screenshot.
// The outline is read even when the screenshot fails, and the first
// error is returned with what was captured. During a dialog storm it
// captures nothing and fails at once.
func (t *Tab) Evidence(ctx context.Context, o EvidenceOptions) (Evidence, error) {
	o = o.withDefaults()
	if err := t.Err(); err != nil {
		return Evidence{}, err
	}
	if t.inDialogStorm() {
		// The page shows one dialog after another and renders nothing.
		return Evidence{}, codeErr(errcode.Timeout, "cdp: evidence: the page is opening dialogs without pause")
	}
	if err := t.checkDocument(ctx); err != nil {
		return Evidence{}, err
	}
	_, loader := t.nav.mainDoc()
	// The outline and the screenshot are taken at once: a busy machine
	// that gives the capture less than it needs then still has the
	// outline, which is most of what a reader of the failure wants.
	var ev Evidence
	var outline string
	var outErr error
	got := make(chan struct{})
	go func() { // waited for below
		defer close(got)
		outline, outErr = t.outline(ctx, o)
	}()
	shotErr := t.evidenceShot(ctx, o, &ev)
	<-got
	_, now := t.nav.mainDoc()
	moved := now != loader
	if moved {
		// The page changed under the capture: judge the next document.
		if err := t.checkDocument(ctx); err != nil {
			return Evidence{}, err
		}
	}
	ev.Outline = outline
	if shotErr != nil {
		return ev, shotErr
	}
	return ev, outErr
}

// evidenceShot takes the screenshot with every text field's box painted
// over. The page itself is never changed, so a capture cut short leaves
// nothing behind: the boxes are read before and after the capture (a page
// that moved its fields in between has both painted) and painted on the
// image here. A screenshot whose fields cannot be found is not kept.
func (t *Tab) evidenceShot(ctx context.Context, o EvidenceOptions, ev *Evidence) error {
	m, err := t.c.Page.GetLayoutMetrics(ctx)
	if err != nil {
		return t.fail(err)
	}
	v := m.CSSVisualViewport
	if v.ClientWidth <= 0 || v.ClientHeight <= 0 {
		return fmt.Errorf("cdp: evidence: the page has no viewport")
	}
	before, err := t.fieldBoxes(ctx)
	if err != nil {
		return err
	}
	scale := min(1, float64(o.MaxWidth)/v.ClientWidth)
	args := page.NewCaptureScreenshotArgs().SetFormat("jpeg").SetQuality(o.Quality).
		SetClip(page.Viewport{X: v.PageX, Y: v.PageY, Width: v.ClientWidth, Height: v.ClientHeight, Scale: scale})
	shot, err := t.capture(ctx, args)
	if err != nil {
		return err
	}
	after, err := t.fieldBoxes(ctx)
	if err != nil {
		return err
	}
	img, err := maskFields(shot, append(before, after...), v.ClientWidth, v.ClientHeight, o.Quality)
	if err != nil {
		return err
	}
	ev.JPEG = img
	return nil
}

// fieldBoxesJS returns, in CSS pixels of the visual viewport, the border
// box of every element that shows what a person typed: text inputs,
// textareas and contenteditable elements, in open shadow roots and
// same-origin frames too, and every frame or plugin whose document the
// isolated world cannot read, whole.
const fieldBoxesJS = `function () {
  const out = [];
  const vv = window.visualViewport;
  const ox = vv ? vv.offsetLeft : 0, oy = vv ? vv.offsetTop : 0;
  const shown = new Set(["button", "submit", "reset", "checkbox", "radio", "range", "color", "hidden", "image", "file"]);
  const add = (r, dx, dy) => {
    if (r.width > 0 && r.height > 0) out.push([r.left + dx - ox, r.top + dy - oy, r.width, r.height]);
  };
  const walk = (root, dx, dy, depth) => {
    for (const el of root.querySelectorAll("*")) {
      const tag = el.localName;
      if (tag === "input") {
        if (!shown.has(String(el.type).toLowerCase())) add(el.getBoundingClientRect(), dx, dy);
      } else if (tag === "textarea") {
        add(el.getBoundingClientRect(), dx, dy);
      } else if (el.isContentEditable) {
        if (!(el.parentElement && el.parentElement.isContentEditable)) add(el.getBoundingClientRect(), dx, dy);
      } else if (tag === "iframe" || tag === "frame" || tag === "object" || tag === "embed") {
        const r = el.getBoundingClientRect();
        let doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (!doc || !doc.documentElement || depth > 8) {
          add(r, dx, dy);
        } else {
          const cs = getComputedStyle(el);
          walk(doc, dx + r.left + el.clientLeft + parseFloat(cs.paddingLeft || "0"),
            dy + r.top + el.clientTop + parseFloat(cs.paddingTop || "0"), depth + 1);
        }
      }
      if (el.shadowRoot) walk(el.shadowRoot, dx, dy, depth);
    }
  };
  walk(document, 0, 0, 0);
  return out;
}`

// fieldBoxes reads the boxes fieldBoxesJS finds.
func (t *Tab) fieldBoxes(ctx context.Context) ([][4]float64, error) {
	raw, err := t.call(ctx, sdkWorld, fieldBoxesJS, nil)
	if err != nil {
		return nil, fmt.Errorf("cdp: evidence: finding the page's text fields: %w", err)
	}
	var boxes [][4]float64
	if err := json.Unmarshal(raw, &boxes); err != nil {
		return nil, fmt.Errorf("cdp: evidence: finding the page's text fields: %w", err)
	}
	return boxes, nil
}

// fieldMask is the colour painted over a text field, and maskMargin the
// image pixels painted around its box, for a focus ring or a caret.
var fieldMask = image.NewUniform(color.RGBA{0xc8, 0xc8, 0xc8, 0xff})

const maskMargin = 2

// maskFields paints boxes, in CSS pixels of a viewport w by h, over the
// JPEG shot and encodes it again at quality.
func maskFields(shot []byte, boxes [][4]float64, w, h float64, quality int) ([]byte, error) {
	src, err := jpeg.Decode(bytes.NewReader(shot))
	if err != nil {
		return nil, fmt.Errorf("cdp: evidence: reading the screenshot: %w", err)
	}
	b := src.Bounds()
	img := image.NewRGBA(b)
	draw.Draw(img, b, src, b.Min, draw.Src)
	fx, fy := float64(b.Dx())/w, float64(b.Dy())/h
	// px is a coordinate in image pixels, held to the image so that a
	// box far off the page converts to no overflowing int.
	px := func(v, f, size float64, round func(float64) float64) int {
		return int(round(max(-1, min(v*f, size+1))))
	}
	for _, x := range boxes {
		r := image.Rect(
			px(x[0], fx, float64(b.Dx()), math.Floor)-maskMargin, px(x[1], fy, float64(b.Dy()), math.Floor)-maskMargin,
			px(x[0]+x[2], fx, float64(b.Dx()), math.Ceil)+maskMargin, px(x[1]+x[3], fy, float64(b.Dy()), math.Ceil)+maskMargin,
		).Add(b.Min).Intersect(b)
		draw.Draw(img, r, fieldMask, image.Point{}, draw.Src)
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("cdp: evidence: encoding the screenshot: %w", err)
	}
	return out.Bytes(), nil
}

// textEntryRoles are roles whose subtree shows what was typed: the
// outline names them and goes no deeper.
var textEntryRoles = map[string]bool{
	"textbox": true, "searchbox": true, "combobox": true, "spinbutton": true, "TextField": true,
}

// outline renders the page's accessibility tree to o.Depth, without
// ignored nodes (their children move up) and without values.
func (t *Tab) outline(ctx context.Context, o EvidenceOptions) (string, error) {
	r, err := t.c.Accessibility.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs().SetDepth(o.Depth))
	if err != nil {
		return "", t.fail(err)
	}
	byID := make(map[accessibility.AXNodeID]*accessibility.AXNode, len(r.Nodes))
	for i := range r.Nodes {
		byID[r.Nodes[i].NodeID] = &r.Nodes[i]
	}
	var b strings.Builder
	lines := 0
	var walk func(n *accessibility.AXNode, depth int)
	walk = func(n *accessibility.AXNode, depth int) {
		if lines >= o.MaxLines || depth > o.Depth {
			return
		}
		role, name := axString(n.Role), axString(n.Name)
		shown := !n.Ignored && role != "none" && role != "generic" && !(role == "StaticText" && name == "") && role != "InlineTextBox"
		if shown {
			b.WriteString(strings.Repeat("  ", depth))
			b.WriteString(role)
			if name != "" {
				fmt.Fprintf(&b, " %q", cutRunes(name, 80))
			}
			b.WriteByte('\n')
			lines++
			if textEntryRoles[role] {
				return
			}
		}
		next := depth
		if shown {
			next++
		}
		for _, c := range n.ChildIDs {
			if k := byID[c]; k != nil {
				walk(k, next)
			}
		}
	}
	if len(r.Nodes) > 0 {
		walk(&r.Nodes[0], 0)
	}
	if lines >= o.MaxLines {
		b.WriteString("…\n")
	}
	return b.String(), nil
}

// cutRunes cuts s to at most n runes.
func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

// Address is the address of the main frame's document as the tab last
// heard of it, without a round trip to the browser: for describing where
// a call ran, not for deciding anything.
func (t *Tab) Address() string { return t.frameURL("") }
