package traceview_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/emulation"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/traceview"
)

// layout is what a page's layout looks like to a reader, measured in
// Chromium.
type layout struct {
	// Overflow is how far the page is wider than the window.
	Overflow int
	// Wrapped lists the cells meant to stay on one line (times, states,
	// methods, codes) that wrapped or were cut, with their text.
	Wrapped []string
	// NotNowrap lists such cells whose white-space is not nowrap.
	NotNowrap  []string
	Times      []string // the timeline's and the accesses' "At" cells
	Durations  []string // the "Took" figures
	Bars       int
	FailedRows int
	Thumbs     int // action screenshots shown, loaded

	Text string
}

// measure is evaluated in the page: for each .nw element, the lines its
// text takes (distinct tops of its text's boxes) and whether it is cut.
const measure = `() => {
	// The lines el's text takes: the distinct tops of its text's boxes
	// (an inline SVG beside the text is no line of its own).
	const lines = el => {
		const tops = new Set(), walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			const r = document.createRange();
			r.selectNodeContents(n);
			for (const b of r.getClientRects()) if (b.width > 0) tops.add(Math.round(b.bottom));
		}
		return tops.size;
	};
	const wrapped = [], notNowrap = [];
	for (const el of document.querySelectorAll(".nw")) {
		const text = el.textContent.trim();
		if (!text) continue;
		if (getComputedStyle(el).whiteSpace !== "nowrap") notNowrap.push(text);
		if (lines(el) > 1 || el.scrollWidth > el.clientWidth + 1) wrapped.push(text);
	}
	return {
		overflow: document.documentElement.scrollWidth - window.innerWidth,
		wrapped, notNowrap,
		times: [...document.querySelectorAll("td.at")].map(td => td.textContent.trim()).filter(Boolean),
		durations: [...document.querySelectorAll(".took .num, #took")].map(s => s.textContent.trim()).filter(Boolean),
		bars: document.querySelectorAll("svg.bar").length,
		failedRows: document.querySelectorAll("#timeline tr.failed").length,
		thumbs: [...document.querySelectorAll("img.thumb")].filter(i => i.complete && i.naturalWidth > 0).length,
		text: document.body.innerText,
	};
}`

var (
	compactTime     = regexp.MustCompile(`^\+(\d{1,2}\.\d s|\d+ min \d\d s|\d+ h \d\d min)$`)
	compactDuration = regexp.MustCompile(`^(\d+(\.\d)? ms|\d{1,2}\.\d s|\d+ min \d\d s|\d+ h \d\d min)$`)
)

// The run list and the four kinds of run page in Chromium at a desktop's
// width and a narrow window's: nothing meant for one line wraps, the page
// never scrolls sideways, and times read compactly.
func TestLayoutInChromium(t *testing.T) {
	runs := withScripts(t, layoutRuns())
	srv := httptest.NewServer(traceview.New(runs, traceview.Options{}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bt, err := cdptabs.Launch(ctx, launch.Options{Path: testenv.Chromium(t), Args: testenv.ChromiumArgs()})
	require.NoError(t, err)
	t.Cleanup(func() { bt.Shutdown() })
	tab, err := bt.Browser().NewTab(ctx, "about:blank")
	require.NoError(t, err)
	t.Cleanup(func() { tab.Close(context.Background()) })

	// TRACEVIEW_SHOTS keeps the screenshots past the test, for a person
	// to look at.
	dir := os.Getenv("TRACEVIEW_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	pages := map[string]string{
		"list": "/", "list-failed": "/?state=failed",
		"succeeded": "/run/run-ok", "failed": "/run/run-failed", "cancelled": "/run/run-cancelled", "retried": "/run/run-retried",
	}
	got := map[string]layout{}
	for _, width := range []int{1280, 800} {
		require.NoError(t, tab.Client().Emulation.SetDeviceMetricsOverride(ctx, emulation.NewSetDeviceMetricsOverrideArgs(width, 800, 1, false)))
		for name, path := range pages {
			_, err := tab.Goto(ctx, srv.URL+path, cdp.Load)
			require.NoError(t, err, path)
			raw, err := tab.Evaluate(ctx, measure)
			require.NoError(t, err)
			var l layout
			require.NoError(t, json.Unmarshal(raw, &l), "%s", raw)
			assert.LessOrEqual(t, l.Overflow, 0, "%s at %d px scrolls sideways", name, width)
			assert.Empty(t, l.Wrapped, "%s at %d px: one-line cells wrapped or cut", name, width)
			assert.Empty(t, l.NotNowrap, "%s at %d px", name, width)
			for _, s := range l.Times {
				assert.Regexp(t, compactTime, s, "%s at %d px", name, width)
			}
			for _, s := range l.Durations {
				assert.Regexp(t, compactDuration, s, "%s at %d px", name, width)
			}
			png, err := tab.Screenshot(ctx, cdp.ScreenshotOptions{FullPage: true})
			require.NoError(t, err)
			file := filepath.Join(dir, name+"-"+strconv.Itoa(width)+".png")
			require.NoError(t, os.WriteFile(file, png, 0o644))
			t.Logf("screenshot %s", file)
			got[name+"-"+strconv.Itoa(width)] = l
		}
	}

	// Every call names its script's file and line, and shows that line.
	for _, e := range runs.runs {
		for _, c := range runs.traces[e.ID].Calls {
			if c.File == "" {
				continue
			}
			text := got[map[string]string{"run-ok": "succeeded", "run-failed": "failed", "run-cancelled": "cancelled", "run-retried": "retried"}[e.ID]+"-800"].Text
			name, _ := url.PathUnescape(c.File)
			assert.Contains(t, text, name+":"+strconv.Itoa(c.Line), "%s call %d", e.ID, c.Seq)
			line := strings.Split(fixtureScripts[name], "\n")[c.Line-1]
			assert.Contains(t, text, strings.TrimSpace(line), "%s call %d: its script line", e.ID, c.Seq)
		}
	}
	assert.Contains(t, got["succeeded-1280"].Text, "Your cart · Shop", "the tab named by its first page's title")
	assert.Equal(t, 2, got["succeeded-1280"].Thumbs, "the fill's before and after")

	ok := got["succeeded-800"]
	assert.Contains(t, ok.Durations, "11.4 s", "the step's and calls' lengths")
	assert.Contains(t, ok.Durations, "850 ms")
	assert.Contains(t, ok.Durations, "2.1 s")
	assert.Contains(t, ok.Times, "+0.4 s")
	assert.Contains(t, ok.Times, "+11.0 s")
	assert.NotZero(t, ok.Bars)
	assert.Contains(t, ok.Text, "the SDK's own connection and settings")
	assert.NotContains(t, ok.Text, "TRANQUIL_", "the SDK's settings folded")
	assert.NotContains(t, ok.Text, "127.0.0.1:41234", "the bridge folded")
	assert.Contains(t, ok.Text, "/home/u/orders/in.csv", "the script's own access listed")

	failed, _, _ := strings.Cut(got["failed-1280"].Text, "\nOutput\n") // the output is the script's own
	assert.Equal(t, 2, strings.Count(failed, checkoutErr), "the failure once where it happened and once as the run's why, not again for its step or as the first error:\n%s", failed)
	assert.NotContains(t, failed, "First error")

	retried := got["retried-1280"].Text
	assert.Contains(t, retried, "ok after retries")
	assert.Contains(t, retried, "attempt 1 of 2")
	assert.Contains(t, retried, "retried (timeout)", "the failed attempt's call is retried, not failed")
	assert.Equal(t, 1, strings.Count(retried, "timed out after 2.0 s"), "the attempt's error once")
	assert.Contains(t, retried, "Call 1 tab.click (retried)", "its evidence is marked retried too")

	assert.Contains(t, got["cancelled-1280"].Durations, "2 min 05 s")
	assert.Contains(t, got["cancelled-1280"].Text, "unfinished")
	assert.Zero(t, got["cancelled-1280"].FailedRows, "a call the cancel cut off is no failure")
	assert.Zero(t, got["retried-1280"].FailedRows, "a failure a retry went past is no failure")
	assert.Equal(t, 2, got["failed-1280"].FailedRows, "the failed step and its failed call")
	assert.Contains(t, got["list-failed-1280"].Text, "checkout-")
	assert.NotContains(t, got["list-failed-1280"].Text, "reorder-groceries", "the filter keeps failed runs only")
}
