package cdp

import (
	"bytes"
	"context"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/target"
	"github.com/stretchr/testify/require"
)

// backgroundTab opens a tab as a host opens one in the background
// (Target.createTarget with background set), at url, closed when the test
// ends.
func backgroundTab(t *testing.T, url string) *Tab {
	t.Helper()
	ctx := tctx(t, 20*time.Second)
	r, err := sharedConn.c.Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank").SetBackground(true))
	require.NoError(t, err)
	tab, err := sharedConn.AttachWith(ctx, string(r.TargetID), TabOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(ctx)
	})
	_, err = tab.Goto(ctx, url, Load)
	require.NoError(t, err)
	return tab
}

// A tab in the background that has sat there a while paints no frames:
// its screenshots, viewport, clip and full page, and its evidence, are
// taken all the same, where it is.
func TestScreenshotOfABackgroundTab(t *testing.T) {
	url := serve("/shot-bg", `<body style="margin:0;background:#0f0"><div style="height:2000px"></div></body>`)
	newTab(t, url) // in front of it
	bg := backgroundTab(t, url)
	// Chromium stops painting a hidden page a few hundred milliseconds
	// after it was last shown; the tab must have sat past that.
	time.Sleep(time.Second)

	for _, o := range []ScreenshotOptions{{}, {Clip: &Rect{X: 5, Y: 5, Width: 30, Height: 20}}, {FullPage: true}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		b, err := bg.Screenshot(ctx, o)
		cancel()
		took := time.Since(start)
		t.Logf("%+v: %d bytes in %v", o, len(b), took)
		require.NoError(t, err)
		require.Less(t, took, 5*time.Second)
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err)
		r, g, bl, _ := img.At(2, 2).RGBA()
		require.Equal(t, [3]uint32{0, 0xffff, 0}, [3]uint32{r, g, bl})
		if o.FullPage {
			require.Equal(t, 2000, img.Bounds().Dy())
		}
	}
	ctx := tctx(t, 10*time.Second)
	ev, err := bg.Evidence(ctx, EvidenceOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, ev.JPEG, "the evidence's screenshot")

	// Screenshots at once on one tab each get theirs.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = bg.Screenshot(ctx, ScreenshotOptions{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}
