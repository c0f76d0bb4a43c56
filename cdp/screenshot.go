package cdp

import (
	"context"

	"github.com/mafredri/cdp/protocol/page"
)

// Rect is a region of the page in CSS pixels.
type Rect struct{ X, Y, Width, Height float64 }

// ScreenshotOptions selects what to capture. The zero value captures the
// viewport.
type ScreenshotOptions struct {
	// Clip captures only this region of the page.
	Clip *Rect
	// FullPage captures the whole scrollable page; Clip wins if both are set.
	FullPage bool
	// Capture, when set, takes the pixels instead of the browser (a host
	// whose pages the protocol cannot capture, such as Electron webview
	// guests). The document is still checked as for any screenshot.
	Capture func(ctx context.Context) ([]byte, error)
}

// Screenshot captures the page as PNG. It is a page action: the document
// shown must be one the tab's sites allow, before and after the capture.
// A tab in the background is captured where it is, neither shown nor
// focused (see capture).
func (t *Tab) Screenshot(ctx context.Context, opts ScreenshotOptions) ([]byte, error) {
	var png []byte
	err := t.act(ctx, "screenshot", "", false, func(ctx context.Context) error {
		_, loader := t.nav.mainDoc()
		if err := t.checkDocument(ctx); err != nil {
			return err
		}
		var err error
		if png, err = t.screenshot(ctx, opts); err != nil {
			return err
		}
		_, now := t.nav.mainDoc()
		moved := now != loader
		if moved {
			// The page changed under the capture: what it shows may be
			// the next document, so judge that one too.
			return t.checkDocument(ctx)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return png, nil
}

func (t *Tab) screenshot(ctx context.Context, opts ScreenshotOptions) ([]byte, error) {
	if opts.Capture != nil {
		return opts.Capture(ctx)
	}
	args := page.NewCaptureScreenshotArgs().SetFormat("png")
	switch {
	case opts.Clip != nil:
		c := opts.Clip
		args.SetClip(page.Viewport{X: c.X, Y: c.Y, Width: c.Width, Height: c.Height, Scale: 1}).SetCaptureBeyondViewport(true)
	case opts.FullPage:
		m, err := t.c.Page.GetLayoutMetrics(ctx)
		if err != nil {
			return nil, t.fail(err)
		}
		s := m.CSSContentSize
		args.SetClip(page.Viewport{Width: s.Width, Height: s.Height, Scale: 1}).SetCaptureBeyondViewport(true)
	}
	return t.capture(ctx, args)
}

// capture runs Page.captureScreenshot while the tab is being screencast.
//
// A capture copies the next frame the page paints, and a tab Chromium
// keeps in the background (opened with background: true, or left behind
// another) stops painting a moment after it was last shown: headless, its
// capture then never answers. Page.bringToFront, as Puppeteer does before
// every screenshot, would make it the user's tab. A screencast instead
// counts the page as captured, as a shared tab is, which keeps it painting
// where it is; its own frames are asked for at one pixel and never
// acknowledged, so the browser sends at most a couple.
//
// One capture runs at a time on a session: the screencast is the
// session's, and one capture's end would stop another's.
func (t *Tab) capture(ctx context.Context, args *page.CaptureScreenshotArgs) ([]byte, error) {
	select {
	case t.capturing <- struct{}{}:
		defer func() { <-t.capturing }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	cast := page.NewStartScreencastArgs().SetFormat("jpeg").SetQuality(0).SetMaxWidth(1).SetMaxHeight(1)
	if err := t.c.Page.StartScreencast(ctx, cast); err != nil {
		return nil, t.fail(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = t.c.Page.StopScreencast(cctx) // a tab gone takes its screencast along
	}()
	r, err := t.c.Page.CaptureScreenshot(ctx, args)
	if err != nil {
		return nil, t.fail(err)
	}
	return r.Data, nil
}
