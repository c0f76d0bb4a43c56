package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tranquil/automation/launch"
)

// benchFlags are the flags every browser of the benchmark gets, besides
// headless mode, which each launcher spells its own way.
func benchFlags() []string {
	flags := launch.DefaultFlags()
	if os.Geteuid() == 0 {
		flags = append(flags, "--no-sandbox")
	}
	return flags
}

// startWithPort starts a headless browser with a DevTools port, for the
// peers that need an endpoint, and returns its browser WebSocket URL.
func startWithPort(ctx context.Context, chromium string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "bench-cdp-")
	if err != nil {
		return "", nil, err
	}
	args := append([]string{"--headless=new", "--user-data-dir=" + dir, "--remote-debugging-port=0"}, benchFlags()...)
	cmd := exec.Command(chromium, append(args, "about:blank")...)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); os.RemoveAll(dir) }
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); err == nil && len(lines) == 2 {
			return "ws://127.0.0.1:" + strings.TrimSpace(lines[0]) + strings.TrimSpace(lines[1]), stop, nil
		}
	}
	stop()
	return "", nil, errors.New("the browser published no DevTools port")
}

// benchLaunch measures launch-to-attached: from nothing to a session on the
// browser's first page, for our Launcher and for chromedp's ExecAllocator
// given the same flags; both speak CDP over a pipe (chromedp v0.23 uses
// one by default). Samples alternate between the two so machine load hits
// both alike; teardown is not timed.
func benchLaunch(ctx context.Context, chromium string, n int) {
	flags := append([]string{"--headless=new"}, benchFlags()...)
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(chromium)}
	for _, f := range flags {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}

	l := launch.NewLauncher(launch.LauncherOptions{})
	oursOnce := func() time.Duration {
		t0 := time.Now()
		inst, err := l.Launch(ctx, launch.Spec{ExecutablePath: chromium, Kind: launch.KindChromium})
		check(err)
		targets, err := inst.Browser().Targets(ctx)
		check(err)
		_, err = inst.Browser().Attach(ctx, targets[0].ID)
		check(err)
		d := time.Since(t0)
		_, err = l.Cleanup(ctx, inst.ID)
		check(err)
		return d
	}
	chromedpOnce := func() time.Duration {
		t0 := time.Now()
		actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
		defer acancel()
		cctx, ccancel := chromedp.NewContext(actx)
		defer ccancel()
		// No actions: Run allocates, connects and attaches to the first page.
		_, err := chromedp.Run(cctx, chromedp.Action[chromedp.Void](func(context.Context, *chromedp.Target) (chromedp.Void, error) {
			return chromedp.Void{}, nil
		}))
		check(err)
		d := time.Since(t0)
		check(chromedp.Cancel(cctx))
		return d
	}
	var ours, dp []time.Duration
	for i := 0; i < n+1; i++ { // the first round warms the page cache
		// Each goes first in every other round, so that neither always
		// starts while the other's teardown is still settling.
		var d, d2 time.Duration
		if i%2 == 0 {
			d = oursOnce()
			d2 = chromedpOnce()
		} else {
			d2 = chromedpOnce()
			d = oursOnce()
		}
		if i > 0 {
			ours, dp = append(ours, d), append(dp, d2)
		}
	}
	fmt.Printf("Launch to attached p50 (headless, same flags, both over a pipe, %d each, alternating):\n", n)
	fmt.Printf("  %-22s %8.1f ms\n", "ours (Launcher, pipe)", ms(p50(ours)))
	fmt.Printf("  %-22s %8.1f ms\n", "chromedp ExecAllocator", ms(p50(dp)))
	fmt.Printf("  ratio ours/chromedp   %.2f  (target ≤ 1.00)\n", float64(p50(ours))/float64(p50(dp)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
