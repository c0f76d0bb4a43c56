package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tranquil/automation/cdp"
)

// benchLaunch measures launch-to-attached: from nothing to a session on the
// browser's first page, for our Launcher and for chromedp's ExecAllocator
// given the same flags. Samples alternate between the two so machine load
// hits both alike; teardown is not timed.
func benchLaunch(ctx context.Context, chromium string, n int) {
	flags := append([]string{"--headless=new"}, cdp.DefaultFlags...)
	if os.Geteuid() == 0 {
		flags = append(flags, "--no-sandbox")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium)}
	for _, f := range flags {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}

	l := cdp.NewLauncher(cdp.LauncherOptions{})
	var ours, dp []time.Duration
	for i := 0; i < n+1; i++ { // the first round warms the page cache
		t0 := time.Now()
		inst, err := l.Launch(ctx, cdp.LaunchSpec{ExecutablePath: chromium, Kind: cdp.KindChromium})
		check(err)
		targets, err := inst.Browser.Targets(ctx)
		check(err)
		_, err = inst.Browser.Attach(ctx, targets[0].ID)
		check(err)
		d := time.Since(t0)
		_, err = l.Cleanup(ctx, inst.ID)
		check(err)

		t0 = time.Now()
		actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
		cctx, ccancel := chromedp.NewContext(actx)
		// No actions: Run allocates, connects and attaches to the first page.
		_, err = chromedp.Run(cctx, chromedp.Action[chromedp.Void](func(context.Context, *chromedp.Target) (chromedp.Void, error) {
			return chromedp.Void{}, nil
		}))
		check(err)
		d2 := time.Since(t0)
		check(chromedp.Cancel(cctx))
		ccancel()
		acancel()
		if i > 0 {
			ours, dp = append(ours, d), append(dp, d2)
		}
	}
	fmt.Printf("Launch to attached p50 (headless, same flags, %d each, alternating):\n", n)
	fmt.Printf("  %-22s %8.1f ms\n", "ours (Launcher)", ms(p50(ours)))
	fmt.Printf("  %-22s %8.1f ms\n", "chromedp ExecAllocator", ms(p50(dp)))
	fmt.Printf("  ratio ours/chromedp   %.2f  (target ≤ 1.00)\n", float64(p50(ours))/float64(p50(dp)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
