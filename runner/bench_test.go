package runner

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
)

// timingUI records when each notification arrives.
type timingUI struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (u *timingUI) Notify(_ context.Context, run RunInfo, msg string, _ Level) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.seen[run.ID]; !ok {
		u.seen[run.ID] = time.Now()
	}
	return nil
}

func (u *timingUI) Open(context.Context, RunInfo, string, OpenOptions) error { return nil }

func benchManager(b *testing.B, ui UI, maxConc int) (*Manager, string) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	store, err := consent.OpenStore(filepath.Join(root, "consent.json"), consent.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(Config{DataDir: root, CacheDir: testenv.DenoCacheDir(b), DenoPath: testenv.Deno(b), Host: Host{UI: ui}, MaxConcurrent: maxConc,
		Gate: consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) { return consent.Approve, nil }))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	if err := m.Prepare(context.Background()); err != nil {
		b.Fatal(err)
	}
	return m, root
}

// waitCachesIdle waits until the manager's janitor (runcache.go) has
// laid out its spares and removed ended runs' caches.
func waitCachesIdle(m *Manager) {
	for !m.caches.idle() {
		time.Sleep(time.Millisecond)
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// BenchmarkLaunch measures Start → the script's first host call arriving,
// against a bare deno run of a script that imports npm:capnweb and opens a
// WebSocket to a Go echo server, interleaved. Target ratio ≤ 1.3.
func BenchmarkLaunch(b *testing.B) {
	ui := &timingUI{seen: map[string]time.Time{}}
	m, root := benchManager(b, ui, 4)
	script := filepath.Join(root, "first.ts")
	os.WriteFile(script, []byte("// @permissions none\nimport { ui } from \"tranquil/automation\";\nawait ui.notify(\"first\");\n"), 0o644)

	echo := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		typ, msg, err := c.Read(r.Context())
		if err == nil {
			c.Write(r.Context(), typ, msg)
		}
		c.Read(r.Context())
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go echo.Serve(ln)
	defer echo.Close()
	bare := filepath.Join(root, "bare.ts")
	os.WriteFile(bare, []byte(`import "npm:capnweb@0.12.0";
const ws = new WebSocket(Deno.args[0]);
ws.onopen = () => ws.send("x");
ws.onmessage = () => Deno.exit(0);
`), 0o644)
	env := append(m.baseEnv(), downloadEnv()...)
	warm := exec.Command(m.deno, "cache", bare)
	warm.Env = env
	if out, err := warm.CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}

	var ours, peer []time.Duration
	for b.Loop() {
		waitCachesIdle(m) // the janitor's work after a run lands in neither side's time
		start := time.Now()
		r, err := m.Start(context.Background(), Request{Script: script})
		if err != nil {
			b.Fatal(err)
		}
		e, _ := r.Wait(context.Background())
		if e.State != history.StateSucceeded {
			b.Fatalf("run %s: %s %s", e.State, e.Reason, e.Output)
		}
		ui.mu.Lock()
		ours = append(ours, ui.seen[r.ID()].Sub(start))
		ui.mu.Unlock()

		waitCachesIdle(m)
		start = time.Now()
		cmd := exec.Command(m.deno, "run", "--no-prompt", "--allow-net="+ln.Addr().String(), bare, "ws://"+ln.Addr().String()+"/")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare run: %v %s", err, out)
		}
		peer = append(peer, time.Since(start))
	}
	b.ReportMetric(float64(pct(ours, .5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(ours, .99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(pct(peer, .5).Microseconds())/1000, "bare-p50-ms")
	b.ReportMetric(float64(pct(ours, .5))/float64(pct(peer, .5)), "ratio")
}

// BenchmarkConcurrentRuns starts 32 no-op runs at once and reports the wall
// time and the host's heap per run.
func BenchmarkConcurrentRuns(b *testing.B) {
	m, root := benchManager(b, nil, 32)
	script := filepath.Join(root, "noop.ts")
	os.WriteFile(script, []byte("// @permissions none\nimport { context } from \"tranquil/automation\";\nawait context.result(1);\n"), 0o644)
	var walls []time.Duration
	var perRun uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		runs := make([]*Run, 32)
		for i := range runs {
			runs[i], _ = m.Start(context.Background(), Request{Script: script})
		}
		var after runtime.MemStats
		peak := uint64(0)
		for _, r := range runs {
			runtime.ReadMemStats(&after)
			peak = max(peak, after.HeapInuse)
			if e, _ := r.Wait(context.Background()); e.State != history.StateSucceeded {
				b.Fatalf("run %s: %s", e.State, e.Reason)
			}
		}
		walls = append(walls, time.Since(start))
		if peak > before.HeapInuse {
			perRun = (peak - before.HeapInuse) / 32
		}
	}
	b.ReportMetric(float64(pct(walls, .5).Milliseconds()), "wall-ms")
	b.ReportMetric(float64(perRun)/1024, "heap-KiB/run")
}

// BenchmarkCancel measures Cancel → run ended, for a cooperative script and
// for one that ignores both the protocol cancel and SIGTERM (grace 2 s,
// then 1 s, by default).
func BenchmarkCancel(b *testing.B) {
	for _, tc := range []struct{ name, src string }{
		{"cooperative", "import { context } from \"tranquil/automation\";\nconsole.log(\"ready\");\nawait new Promise((r) => context.signal.addEventListener(\"abort\", r));\n"},
		{"uncooperative", "Deno.addSignalListener(\"SIGTERM\", () => {});\nconsole.log(\"ready\");\nawait new Promise(() => {});\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ready := make(chan string, 1)
			root, _ := filepath.EvalSymlinks(b.TempDir())
			store, _ := consent.OpenStore(filepath.Join(root, "consent.json"), consent.StoreOptions{})
			m, err := New(Config{DataDir: root, CacheDir: testenv.DenoCacheDir(b), DenoPath: testenv.Deno(b), Gate: consent.NewGate(store, nil),
				OnEvent: func(e Event) {
					if e.Kind == EventOutput && e.Line == "ready" {
						ready <- e.RunID
					}
				}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			script := filepath.Join(root, "c.ts")
			os.WriteFile(script, []byte("// @permissions none\n// @timeout none\n"+tc.src), 0o644)
			var ds []time.Duration
			for b.Loop() {
				r, err := m.Start(context.Background(), Request{Script: script})
				if err != nil {
					b.Fatal(err)
				}
				<-ready
				start := time.Now()
				r.Cancel("bench")
				r.Wait(context.Background())
				ds = append(ds, time.Since(start))
			}
			b.ReportMetric(float64(pct(ds, .5).Microseconds())/1000, "p50-ms")
		})
	}
}
