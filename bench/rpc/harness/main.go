// Command harness benchmarks the Go Cap'n Web server against the capnweb
// JavaScript server and against the floor of a raw WebSocket round trip,
// all driven by the same Deno client. See ../README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/rpc/capnweb"
)

type benchAPI struct{}

func (benchAPI) Add(a, b float64) float64 { return a + b }
func (benchAPI) Echo(s string) string     { return s }

// serve starts an HTTP server on loopback for h, with the TCP_QUICKACK
// fix when quickAck is set, and returns its ws:// URL and port.
func serve(h http.Handler, quickAck bool) (string, int, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	if quickAck {
		ln = capnweb.QuickAckListener(ln)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	port := ln.Addr().(*net.TCPAddr).Port
	return fmt.Sprintf("ws://127.0.0.1:%d/", port), port, func() { srv.Close() }
}

func capnwebHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := capnweb.AcceptWebSocket(w, r, nil, 1<<20)
		if err != nil {
			return
		}
		capnweb.Serve(context.Background(), ws, benchAPI{}, nil)
	})
}

// echoHandler is the floor: every text frame goes straight back.
func echoHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		ctx := context.Background()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				c.CloseNow()
				return
			}
			if err := c.Write(ctx, typ, b); err != nil {
				return
			}
		}
	})
}

// idealHandler answers the capnweb client with the fewest possible steps:
// it computes add and echo from the push frame and answers each pull at
// once, with no RPC machinery. It is the floor for a capnweb server, as
// opposed to the raw echo floor of the WebSocket itself.
func idealHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		ctx := context.Background()
		results := map[int][]byte{}
		next := 1
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				c.CloseNow()
				return
			}
			var m []any
			if json.Unmarshal(b, &m) != nil || len(m) < 2 {
				continue
			}
			switch m[0] {
			case "push":
				call, _ := m[1].([]any)
				var res []byte
				if len(call) == 4 {
					path, _ := call[2].([]any)
					args, _ := call[3].([]any)
					if len(path) == 1 && path[0] == "add" && len(args) == 2 {
						res, _ = json.Marshal(args[0].(float64) + args[1].(float64))
					} else if len(args) == 1 {
						res, _ = json.Marshal(args[0])
					}
				}
				results[next] = res
				next++
			case "pull":
				id := int(m[1].(float64))
				out := fmt.Appendf(nil, `["resolve",%d,%s]`, id, results[id])
				if c.Write(ctx, websocket.MessageText, out) != nil {
					return
				}
			case "release":
				delete(results, int(m[1].(float64)))
			}
		}
	})
}

type stat struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	N   int     `json:"n"`
}

type result struct {
	Add      stat    `json:"add"`
	Echo     stat    `json:"echo"`
	AddRate  float64 `json:"addRate"`
	EchoRate float64 `json:"echoRate"`
}

// exitFunc ends the program; startJS wraps it so that the JS server never
// outlives the harness.
var exitFunc = os.Exit

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench/rpc:", err)
	exitFunc(1)
}

func main() {
	seconds := flag.Float64("seconds", 3, "duration of each measurement")
	cpu := flag.Bool("cpu", false, "also report CPU time per call of client and server at 64 in flight")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the Go servers to this file")
	serveOnly := flag.Bool("serve", false, "only serve, printing the servers' URLs, until interrupted (for profiling with outside tools)")
	only := flag.String("only", "", "run only this client transport (ws or nodelay)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	deno, err := testenv.LookDeno()
	if err != nil {
		fatal(err)
	}
	here, _ := os.Getwd()

	goURL, goPort, stop1 := serve(capnwebHandler(), true)
	defer stop1()
	plainURL, plainPort, stop2 := serve(capnwebHandler(), false)
	defer stop2()
	floorURL, floorPort, stop3 := serve(echoHandler(), true)
	defer stop3()
	idealURL, idealPort, stop4 := serve(idealHandler(), true)
	defer stop4()
	jsURL, jsPort, stopJS := startJS(deno, here)
	defer stopJS()

	if *serveOnly {
		fmt.Printf("go %s\njs %s\nfloor %s\ncanned %s\n", goURL, jsURL, floorURL, idealURL)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		return
	}
	allow := fmt.Sprintf("--allow-net=127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", goPort, plainPort, floorPort, idealPort, jsPort)
	run := func(url, kind, transport string, secs float64, phases ...string) result {
		args := []string{"run", "--no-prompt", "--quiet", allow, filepath.Join(here, "client.ts"), url, kind, transport, fmt.Sprint(secs)}
		args = append(args, phases...)
		cmd := exec.Command(deno, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			fatal(fmt.Errorf("client %s %s %s: %w", url, kind, transport, err))
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			fatal(fmt.Errorf("client output %q: %w", out, err))
		}
		return r
	}

	for _, tr := range []struct{ name, title string }{
		{"ws", "Deno's stock WebSocket client (Nagle on)"},
		{"nodelay", "a WebSocket client over Deno.connect with setNoDelay(true)"},
	} {
		if *only != "" && *only != tr.name {
			continue
		}
		fmt.Printf("\n== capnweb client in Deno over %s\n", tr.title)
		goR := run(goURL, "rpc", tr.name, *seconds)
		jsR := run(jsURL, "rpc", tr.name, *seconds)
		floorR := run(floorURL, "floor", tr.name, *seconds)
		idealR := run(idealURL, "rpc", tr.name, *seconds)
		var plainR *result
		if tr.name == "ws" {
			r := run(plainURL, "rpc", tr.name, 1)
			plainR = &r
		}
		fmt.Printf("%-28s %9s %9s %9s %9s %10s %10s\n", "server", "add p50", "add p99", "echo p50", "echo p99", "add/s@64", "echo/s@64")
		row := func(name string, r result) {
			fmt.Printf("%-28s %7.3fms %7.3fms %7.3fms %7.3fms %10.0f %10.0f\n", name, r.Add.P50, r.Add.P99, r.Echo.P50, r.Echo.P99, r.AddRate, r.EchoRate)
		}
		row("(a) Go, TCP_QUICKACK", goR)
		if plainR != nil {
			row("    Go without TCP_QUICKACK", *plainR)
		}
		row("(b) capnweb JS in Deno", jsR)
		row("(c) floor: raw echo (Go)", floorR)
		row("    canned capnweb replies", idealR)
		fmt.Printf("ratios  Go/JS    latency p50 add %.2f, echo %.2f; throughput add %.2f, echo %.2f\n",
			goR.Add.P50/jsR.Add.P50, goR.Echo.P50/jsR.Echo.P50, goR.AddRate/jsR.AddRate, goR.EchoRate/jsR.EchoRate)
		fmt.Printf("ratios  Go/floor latency p50 add %.2f, echo %.2f; throughput add %.2f, echo %.2f\n",
			goR.Add.P50/floorR.Add.P50, goR.Echo.P50/floorR.Echo.P50, goR.AddRate/floorR.AddRate, goR.EchoRate/floorR.EchoRate)
		fmt.Printf("ratios  Go/canned latency p50 add %.2f, echo %.2f; throughput add %.2f, echo %.2f\n",
			goR.Add.P50/idealR.Add.P50, goR.Echo.P50/idealR.Echo.P50, goR.AddRate/idealR.AddRate, goR.EchoRate/idealR.EchoRate)
		if *cpu {
			fmt.Printf("CPU per call at 64 in flight (add and echo together): client / server\n")
			for _, sv := range []struct {
				name, url string
				server    func() time.Duration
			}{
				{"(a) Go", goURL, selfCPU},
				{"(b) capnweb JS", jsURL, func() time.Duration { return processCPU(jsPID) }},
				{"(c) floor", floorURL, selfCPU},
				{"    canned", idealURL, selfCPU},
			} {
				kind := "rpc"
				if sv.url == floorURL {
					kind = "floor"
				}
				s0 := sv.server()
				var cr result
				var clientCPU time.Duration
				func() {
					args := []string{"run", "--no-prompt", "--quiet", allow, filepath.Join(here, "client.ts"), sv.url, kind, tr.name, fmt.Sprint(*seconds), "rate"}
					cmd := exec.Command(deno, args...)
					cmd.Stderr = os.Stderr
					out, err := cmd.Output()
					if err != nil {
						fatal(err)
					}
					json.Unmarshal(out, &cr)
					clientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}()
				calls := (cr.AddRate + cr.EchoRate) * *seconds
				serverCPU := sv.server() - s0
				fmt.Printf("%-28s %6.1f µs / %6.1f µs  (%.0f add/s, %.0f echo/s)\n", sv.name,
					float64(clientCPU.Microseconds())/calls, float64(serverCPU.Microseconds())/calls, cr.AddRate, cr.EchoRate)
			}
		}
		verdict := func(ok bool) string {
			if ok {
				return "met"
			}
			return "MISSED"
		}
		stall := goR.Add.P50 > 20 || goR.Echo.P50 > 20
		fmt.Printf("targets no stall (Go p50 < 20 ms): %s; sequential p50 <= 1.5x floor: %s (add %.2fx, echo %.2fx); throughput >= 1.5x JS: %s (add %.2fx, echo %.2fx)\n",
			verdict(!stall),
			verdict(goR.Add.P50 <= 1.5*floorR.Add.P50 && goR.Echo.P50 <= 1.5*floorR.Echo.P50), goR.Add.P50/floorR.Add.P50, goR.Echo.P50/floorR.Echo.P50,
			verdict(goR.AddRate >= 1.5*jsR.AddRate && goR.EchoRate >= 1.5*jsR.EchoRate), goR.AddRate/jsR.AddRate, goR.EchoRate/jsR.EchoRate)
	}
}

// startJS runs jsserver.ts and returns its URL and port.
func startJS(deno, dir string) (string, int, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, deno, "run", "--no-prompt", "--quiet", "--allow-net=127.0.0.1", filepath.Join(dir, "jsserver.ts"))
	cmd.WaitDelay = 3 * time.Second
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		fatal(fmt.Errorf("the JS server printed nothing"))
	}
	var port int
	if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "LISTEN %d", &port); err != nil {
		fatal(fmt.Errorf("the JS server said %q", sc.Text()))
	}
	stop := func() { cancel(); cmd.Wait() }
	exitFunc = func(code int) { stop(); os.Exit(code) }
	jsPID = cmd.Process.Pid
	return fmt.Sprintf("ws://127.0.0.1:%d/", port), port, stop
}

// jsPID is the JS server's process, whose CPU time -cpu reports.
var jsPID int

// selfCPU is this process's CPU time: the Go servers'.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is another process's CPU time, from /proc (Linux only).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100
}
