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
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/rpc/wsconn"
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
		ln = wsconn.QuickAckListener(ln)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	port := ln.Addr().(*net.TCPAddr).Port
	return fmt.Sprintf("ws://127.0.0.1:%d/", port), port, func() { srv.Close() }
}

func capnwebHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := wsconn.Accept(w, r, nil, 1<<20)
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
	seconds := flag.Float64("seconds", 2, "duration of each measurement")
	rounds := flag.Int("rounds", 3, "measure every server this many times, interleaved, and report medians")
	pin := flag.Bool("pin", false, "run the client on CPU 0 and every server on CPU 1 (Linux, needs taskset)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the Go servers to this file")
	serveOnly := flag.Bool("serve", false, "only serve, printing the servers' URLs, until interrupted (for profiling with outside tools)")
	only := flag.String("only", "", "run only this client transport (ws or nodelay)")
	flag.Parse()
	if *pin && os.Getenv("BENCH_RPC_PINNED") == "" {
		pinSelf()
	}
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
	// run starts one client and returns what it printed, with its CPU time
	// and the server's over the run, and the run's wall time.
	run := func(sv server, transport, phase string, secs float64) measured {
		args := []string{"run", "--no-prompt", "--quiet", allow, filepath.Join(here, "client.ts"), sv.url, sv.kind, transport, fmt.Sprint(secs), phase}
		cmd := exec.Command(deno, args...)
		if *pin {
			cmd = exec.Command("taskset", append([]string{"-c", "0", deno}, args...)...)
		}
		cmd.Stderr = os.Stderr
		s0, t0 := sv.cpu(), time.Now()
		out, err := cmd.Output()
		if err != nil {
			fatal(fmt.Errorf("client %s %s %s: %w", sv.url, sv.kind, transport, err))
		}
		m := measured{wall: time.Since(t0), serverCPU: sv.cpu() - s0,
			clientCPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
		if err := json.Unmarshal(out, &m.result); err != nil {
			fatal(fmt.Errorf("client output %q: %w", out, err))
		}
		return m
	}
	servers := []server{
		{name: "(a) Go, TCP_QUICKACK", url: goURL, kind: "rpc", cpu: selfCPU},
		{name: "(b) capnweb JS in Deno", url: jsURL, kind: "rpc", cpu: func() time.Duration { return processCPU(jsPID) }},
		{name: "(c) floor: raw echo (Go)", url: floorURL, kind: "floor", cpu: selfCPU},
		{name: "    canned capnweb replies", url: idealURL, kind: "rpc", cpu: selfCPU},
	}
	if *pin {
		fmt.Println("client pinned to CPU 0, every server to CPU 1")
	}

	for _, tr := range []struct{ name, title string }{
		{"ws", "Deno's stock WebSocket client (Nagle on)"},
		{"nodelay", "a WebSocket client over Deno.connect with setNoDelay(true)"},
	} {
		if *only != "" && *only != tr.name {
			continue
		}
		compare(tr.name, tr.title, servers, run, *rounds, *seconds, plainURL)
	}
}

// server is one of the servers under test.
type server struct {
	name, url, kind string
	cpu             func() time.Duration // the CPU time of its process
}

// measured is one client run.
type measured struct {
	result
	wall, clientCPU, serverCPU time.Duration
}

// summary is the median over rounds of one server's figures. CPU times are
// per call at 64 in flight; clientBusy is the client's CPU time over the
// wall time of its throughput runs (1 is a whole core).
type summary struct {
	addP50, addP99, echoP50, echoP99 float64
	addRate, echoRate                float64
	clientCPU, serverCPU             float64
	clientBusy                       float64
}

func summarize(seq, rate []measured, seconds float64) summary {
	med := func(ms []measured, f func(measured) float64) float64 {
		xs := make([]float64, len(ms))
		for i, m := range ms {
			xs[i] = f(m)
		}
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	calls := func(m measured) float64 { return (m.AddRate + m.EchoRate) * seconds }
	return summary{
		addP50:     med(seq, func(m measured) float64 { return m.Add.P50 }),
		addP99:     med(seq, func(m measured) float64 { return m.Add.P99 }),
		echoP50:    med(seq, func(m measured) float64 { return m.Echo.P50 }),
		echoP99:    med(seq, func(m measured) float64 { return m.Echo.P99 }),
		addRate:    med(rate, func(m measured) float64 { return m.AddRate }),
		echoRate:   med(rate, func(m measured) float64 { return m.EchoRate }),
		clientCPU:  med(rate, func(m measured) float64 { return float64(m.clientCPU.Microseconds()) / calls(m) }),
		serverCPU:  med(rate, func(m measured) float64 { return float64(m.serverCPU.Microseconds()) / calls(m) }),
		clientBusy: med(rate, func(m measured) float64 { return m.clientCPU.Seconds() / m.wall.Seconds() }),
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

// pinSelf runs this harness again on CPU 1 (its JS server inherits that),
// so that the clients, started on CPU 0, never share a core with a server.
func pinSelf() {
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	cmd := exec.Command("taskset", append([]string{"-c", "1", self}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), "BENCH_RPC_PINNED=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fatal(fmt.Errorf("pinned run: %w", err))
	}
	os.Exit(0)
}

// jsPID is the JS server's process, whose CPU time the harness reports.
var jsPID int

// compare measures every server with the client over one transport,
// interleaving them round by round, and prints the medians, the ratios
// and the verdicts on the targets.
func compare(name, title string, servers []server, run func(sv server, transport, phase string, secs float64) measured, rounds int, seconds float64, plainURL string) {
	fmt.Printf("\n== capnweb client in Deno over %s; median of %d rounds\n", title, rounds)
	// Rounds interleave the servers, so that a slow spell of this
	// shared machine hits all of them alike.
	seq := make([][]measured, len(servers))
	rate := make([][]measured, len(servers))
	for range rounds {
		for i, sv := range servers {
			seq[i] = append(seq[i], run(sv, name, "seq", seconds))
			rate[i] = append(rate[i], run(sv, name, "rate", seconds))
		}
	}
	sum := make([]summary, len(servers))
	for i := range servers {
		sum[i] = summarize(seq[i], rate[i], seconds)
	}
	fmt.Printf("%-28s %9s %9s %9s %9s %10s %10s %s\n", "server", "add p50", "add p99", "echo p50", "echo p99", "add/s@64", "echo/s@64", " CPU/call client, server; client busy")
	for i, sv := range servers {
		x := sum[i]
		fmt.Printf("%-28s %7.3fms %7.3fms %7.3fms %7.3fms %10.0f %10.0f  %5.1fµs %5.1fµs %4.0f%%\n", sv.name,
			x.addP50, x.addP99, x.echoP50, x.echoP99, x.addRate, x.echoRate, x.clientCPU, x.serverCPU, 100*x.clientBusy)
	}
	if name == "ws" {
		m := run(server{url: plainURL, kind: "rpc", cpu: selfCPU}, name, "seq", 1)
		fmt.Printf("%-28s %7.3fms %9s %7.3fms   (every sequential call waits for a delayed ACK)\n", "    Go without TCP_QUICKACK", m.Add.P50, "", m.Echo.P50)
	}
	goS, jsS, floorS := sum[0], sum[1], sum[2]
	fmt.Printf("ratios  Go/JS    latency p50 add %.2f, echo %.2f; throughput add %.2f, echo %.2f\n",
		goS.addP50/jsS.addP50, goS.echoP50/jsS.echoP50, goS.addRate/jsS.addRate, goS.echoRate/jsS.echoRate)
	fmt.Printf("ratios  Go/JS    server-CPU-per-call %.2f\n", goS.serverCPU/jsS.serverCPU)
	fmt.Printf("ratios  Go/floor latency p50 add %.2f, echo %.2f\n", goS.addP50/floorS.addP50, goS.echoP50/floorS.echoP50)
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	stall := goS.addP50 > 20 || goS.echoP50 > 20
	fmt.Printf("targets no stall (Go p50 < 20 ms): %s; sequential p50 <= 1.5x floor: %s (add %.2fx, echo %.2fx); throughput >= 1.5x JS: %s (add %.2fx, echo %.2fx)\n",
		verdict(!stall),
		verdict(goS.addP50 <= 1.5*floorS.addP50 && goS.echoP50 <= 1.5*floorS.echoP50), goS.addP50/floorS.addP50, goS.echoP50/floorS.echoP50,
		verdict(goS.addRate >= 1.5*jsS.addRate && goS.echoRate >= 1.5*jsS.echoRate), goS.addRate/jsS.addRate, goS.echoRate/jsS.echoRate)
	if jsS.clientBusy >= 0.9 && jsS.addP50 < 20 {
		fmt.Printf("note    against the JS server the client was busy %.0f%% of the time: it, not the server, set that pace, so no server can be 1.5x faster with this client\n", 100*jsS.clientBusy)
	}
}
