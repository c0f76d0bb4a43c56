package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// churnFrames adds a frame to the parts page, alternately of its own site
// and of the other one (an out-of-process frame with a session of its
// own), and removes the oldest beyond three.
const churnFrames = `(other) => {
  const box = document.getElementById("box");
  const f = document.createElement("iframe");
  f.src = (box.dataset.n++ % 2 ? other : "") + "/parts/frame";
  box.appendChild(f);
  while (box.children.length > 3) box.firstElementChild.remove();
}`

// TestTabPartsConcurrently drives one tab's frames, navigation and dialogs
// at once, from goroutines of their own besides the tab's receive
// goroutines: gotos, same-document navigations and the waits for them;
// frames attaching and detaching while targets are counted across them;
// dialog handlers swapped while the page's dialogs are answered. Run
// under -race, it is the check that each part of the tab's state is
// guarded by its own lock. A dialog is not opened while a goto replaces
// the document: that would strand it (see Tab.Detach), not test a lock.
func TestTabPartsConcurrently(t *testing.T) {
	serve("/parts/frame", `<!doctype html><label>Code <input></label>`)
	page := serve("/parts/page", `<!doctype html><title>parts</title><div id=box data-n=0></div>`)
	tab := newTab(t, page)
	ctx := tctx(t, 90*time.Second)

	const rounds = 6
	var (
		docs     sync.RWMutex // a goto holds it; a dialog is opened under its read side
		wg       sync.WaitGroup
		navDone  = make(chan struct{})
		counted  atomic.Int32 // counts across the frames that succeeded
		sessions atomic.Int32 // most out-of-process frame sessions seen at once
		answered atomic.Int32
	)
	errs := make(chan error, 3)
	wg.Add(3)
	go func() { // navigation
		defer wg.Done()
		defer close(navDone)
		for i := range rounds {
			docs.Lock()
			_, err := tab.Goto(ctx, fmt.Sprintf("%s?n=%d", page, i), Load)
			docs.Unlock()
			if err != nil {
				errs <- fmt.Errorf("goto %d: %w", i, err)
				return
			}
			hash := fmt.Sprintf("s%d", i)
			err = tab.WaitForNavigation(ctx, Load, func(ctx context.Context) error {
				_, err := tab.Evaluate(ctx, `(h) => { location.hash = h; }`, hash)
				return err
			})
			if err != nil {
				errs <- fmt.Errorf("same-document navigation %d: %w", i, err)
				return
			}
			p, err := GlobPattern("**#" + hash)
			if err == nil {
				err = tab.WaitForURL(ctx, p, Load)
			}
			if err != nil {
				errs <- fmt.Errorf("wait for #%s: %w", hash, err)
				return
			}
		}
	}()
	go func() { // frames
		defer wg.Done()
		// Past the navigation, a few more rounds in its last document.
		for i := 0; ; i++ {
			select {
			case <-navDone:
				if i >= 2*rounds {
					return
				}
			default:
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, _ = tab.Evaluate(cctx, churnFrames, siteOther) // fails while a goto replaces the page
			if n, err := tab.Count(cctx, Locator{Selector: "input"}); err == nil && n > 0 {
				counted.Add(1) // only the frames hold inputs
			}
			cancel()
			tab.frames.mu.Lock()
			n := int32(len(tab.frames.sessions))
			tab.frames.mu.Unlock()
			if n > sessions.Load() {
				sessions.Store(n)
			}
		}
	}()
	go func() { // dialogs
		defer wg.Done()
		for i := range rounds { // fewer than a storm's worth (DialogStormRate)
			text := fmt.Sprintf("answer %d", i)
			tab.HandleDialogs(func(d Dialog) DialogAnswer {
				answered.Add(1)
				return DialogAnswer{Accept: true, PromptText: text}
			})
			docs.RLock()
			v, err := tab.Evaluate(ctx, `(q) => prompt(q, "")`, fmt.Sprintf("question %d", i))
			docs.RUnlock()
			var got string
			if err == nil {
				err = json.Unmarshal(v, &got)
			}
			if err != nil || got != text {
				errs <- fmt.Errorf("dialog %d: %q, %v", i, v, err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Positive(t, counted.Load(), "no count across the frames succeeded")
	require.Positive(t, sessions.Load(), "no out-of-process frame was attached")
	require.EqualValues(t, rounds, answered.Load())
}
