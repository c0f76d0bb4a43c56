package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tranquil/automation/traceview"
)

// traceReadTimeout bounds how long the view waits for a request's
// headers: a local browser sends them at once, and a stuck client must
// not hold a connection open.
const traceReadTimeout = 10 * time.Second

// traceShutdown bounds how long a stopping view waits for requests under
// way: each reads one trace, which takes milliseconds.
const traceShutdown = 5 * time.Second

// trace serves the runs' traces (package traceview) on a loopback address
// until interrupted or ctx ends; with a run ID, it names that run's page.
func (a *app) trace(ctx context.Context, args []string) int {
	fs := a.flags("trace")
	addr := fs.String("addr", "127.0.0.1:0", "the loopback address to serve on (port 0: any free one)")
	pos, err := parse(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 1 {
		fmt.Fprintln(a.stderr, "trace: at most one run ID")
		return exitUsage
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	return a.serveTraces(ctx, *addr, id)
}

// serveTraces serves the traces on addr, a loopback address, until
// interrupted or ctx ends, and prints where: the run list, or run id's
// page when id is set (a run the history must hold).
func (a *app) serveTraces(ctx context.Context, addr, id string) int {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(a.stderr, "trace: --addr must be a loopback IP address and port, such as 127.0.0.1:8080, not %s\n", safe(addr))
		return exitUsage
	}
	data, err := a.dataDir()
	if err != nil {
		fmt.Fprintf(a.stderr, "trace: %s\n", safe(err.Error()))
		return exitFailed
	}
	hist, err := a.openHistory()
	if err != nil {
		fmt.Fprintf(a.stderr, "trace: %s\n", safe(err.Error()))
		return exitFailed
	}
	defer hist.Close()
	page := ""
	if id != "" {
		if _, ok := hist.Get(id); !ok {
			fmt.Fprintf(a.stderr, "trace: no run %s in the history (host history lists them)\n", safe(id))
			return exitFailed
		}
		if _, err := hist.Trace(id); err != nil {
			// A run refused before it started drove no page.
			fmt.Fprintf(a.stderr, "trace: run %s kept no trace (host show %s tells how it ended)\n", safe(id), safe(id))
			return exitFailed
		}
		page = "run/" + url.PathEscape(id)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(a.stderr, "trace: %s\n", safe(err.Error()))
		return exitFailed
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The SDK's own accesses fold into one line: its builds are here.
	view := traceview.New(traceview.FromHistory(hist), traceview.Options{SDKRoot: filepath.Join(data, "sdk")})
	srv := &http.Server{Handler: view, ReadHeaderTimeout: traceReadTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }() // ends with Shutdown below
	if page != "" {
		fmt.Fprintf(a.stdout, "serving run %s's trace at http://%s/%s (Ctrl-C stops)\n", safe(id), ln.Addr(), page)
	} else {
		fmt.Fprintf(a.stdout, "serving the runs' traces at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	}
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), traceShutdown)
		defer cancel()
		err = srv.Shutdown(sctx)
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(a.stderr, "trace: %s\n", safe(err.Error()))
		return exitFailed
	}
	return exitOK
}
