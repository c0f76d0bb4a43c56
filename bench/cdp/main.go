// Command bench measures the cdp package against peers on headless
// Chromium, in one run, and prints p50 ratios:
//
//   - Evaluate through the flattened-session multiplexer over the launched
//     browser's pipe vs chromedp's Evaluate vs a raw WebSocket to the page
//     (the floor), both on a second browser started with a port, since a
//     piped browser has no endpoint to share; ours over that browser's
//     WebSocket is shown too;
//   - the form actions (Tab.Fill, Check, Select, ClickElement) vs
//     Playwright's locator fill, setChecked, selectOption and click, each
//     on a browser it launched over a pipe, targets found by label (or
//     role) and by test id;
//   - launch to the first attached tab: our launch.Launcher over the pipe vs
//     chromedp's ExecAllocator.
//
// Every browser gets the same flags.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"
	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/launch"
)

func main() {
	n := flag.Int("n", 400, "samples per peer")
	samples := flag.Int("actions", 120, "samples per form action per peer")
	rounds := flag.Int("rounds", 2, "rounds of form actions, alternating who goes first")
	chromium := flag.String("chromium", "/usr/bin/chromium", "browser binary")
	launches := flag.Int("launches", 15, "launch samples per peer")
	only := flag.String("only", "", `run one part only: "launch"`)
	flag.Parse()
	log.SetFlags(0)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self' 'unsafe-inline' data:")
		fmt.Fprint(w, formPage)
	})}}
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if *only == "launch" {
		benchLaunch(ctx, *chromium, *launches)
		return
	}
	proc, err := launch.Chromium(ctx, launch.Options{Path: *chromium})
	check(err)
	defer proc.Close()
	tab, err := proc.Browser().NewTab(ctx, srv.URL)
	check(err)

	// The peers need an endpoint: a second browser, started with a port.
	ws, stop, err := startWithPort(ctx, *chromium)
	check(err)
	defer stop()
	wsBrowser, err := cdp.Connect(ctx, ws, nil)
	check(err)
	defer wsBrowser.Close()
	wsTab, err := wsBrowser.NewTab(ctx, srv.URL)
	check(err)

	// chromedp and the raw socket attach to the page ours uses there.
	actx, acancel := remote.NewAllocator(ctx, ws)
	defer acancel()
	dctx, dcancel := chromedp.NewContext(actx, chromedp.WithTargetID(targetID(wsTab.ID())))
	defer dcancel()
	_, err = chromedp.Run(dctx, chromedp.Evaluate[int](`1`))
	check(err)

	raw, err := dialPage(ctx, ws, wsTab.ID())
	check(err)
	defer raw.close()

	peers := []struct {
		name string
		call func() error
		all  []time.Duration
	}{
		{name: "ours (mux, pipe)", call: func() error { _, err := tab.Evaluate(ctx, `() => 1`); return err }},
		{name: "chromedp", call: func() error { _, err := chromedp.Run(dctx, chromedp.Evaluate[int](`1`)); return err }},
		{name: "raw page socket", call: raw.evaluate},
		{name: "ours (mux, WebSocket)", call: func() error { _, err := wsTab.Evaluate(ctx, `() => 1`); return err }},
	}
	// Interleave rounds so drift on a shared machine hits every peer alike.
	const round = 50
	for r := 0; r < *n/round+1; r++ {
		for i := range peers {
			for j := 0; j < round; j++ {
				t0 := time.Now()
				check(peers[i].call())
				if r > 0 { // the first round warms up
					peers[i].all = append(peers[i].all, time.Since(t0))
				}
			}
		}
	}
	fmt.Println("Evaluate p50 (same run; peers on one page of a second browser):")
	for _, p := range peers {
		fmt.Printf("  %-22s %8.1f µs\n", p.name, us(p50(p.all)))
	}
	ours, dp, floor := p50(peers[0].all), p50(peers[1].all), p50(peers[2].all)
	fmt.Printf("  ratio ours/chromedp   %.2f  (target ≤ 1.00)\n", float64(ours)/float64(dp))
	fmt.Printf("  ratio ours/floor      %.2f  (target ≤ 1.25)\n", float64(ours)/float64(floor))

	benchActions(ctx, tab, *chromium, srv.URL, *samples, *rounds)

	benchLaunch(ctx, *chromium, *launches)
}

// rawPage is the floor: one WebSocket straight to the page, one request
// written and its reply read on the calling goroutine, nothing else.
type rawPage struct {
	ws     *websocket.Conn
	ctx    context.Context
	id     int
	object string
}

func dialPage(ctx context.Context, browserWS, targetID string) (*rawPage, error) {
	host := strings.Split(strings.TrimPrefix(browserWS, "ws://"), "/")[0]
	ws, _, err := websocket.Dial(ctx, "ws://"+host+"/devtools/page/"+targetID, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(64 << 20)
	p := &rawPage{ws: ws, ctx: ctx}
	res, err := p.roundTrip(`"method":"Runtime.evaluate","params":{"expression":"globalThis"}`)
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			Result struct {
				ObjectID string `json:"objectId"`
			} `json:"result"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Result.Result.ObjectID == "" {
		return nil, fmt.Errorf("raw: no window object: %s", res)
	}
	p.object = r.Result.Result.ObjectID
	return p, nil
}

func (p *rawPage) roundTrip(body string) ([]byte, error) {
	p.id++
	want := fmt.Sprintf(`{"id":%d,`, p.id)
	if err := p.ws.Write(p.ctx, websocket.MessageText, []byte(want+body+"}")); err != nil {
		return nil, err
	}
	for {
		_, b, err := p.ws.Read(p.ctx)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(string(b), want) {
			return b, nil
		}
	}
}

func (p *rawPage) evaluate() error {
	_, err := p.roundTrip(`"method":"Runtime.callFunctionOn","params":{"functionDeclaration":"() => 1","objectId":"` + p.object + `","returnByValue":true,"awaitPromise":true}`)
	return err
}

func (p *rawPage) close() { _ = p.ws.CloseNow() }

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func targetID(id string) target.ID { return target.ID(id) }
