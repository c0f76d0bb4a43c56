package runner_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/runner"
)

// BenchmarkSoak runs 300 browser runs (4 at a time, each opening a
// background tab, reading it, writing a file and closing the tab) after a
// warm-up, and reports what they left behind against the state after the
// warm-up: goroutines, open file descriptors, processes (the browser's
// own excepted), files (in TMPDIR, the data and the scripts' folders, the
// browser's profile excepted) and tabs, each of which must be 0, and the
// heap at the end against the heap halfway (heap-ratio; flat is 1). It is
// Linux-only: it reads /proc. bench/soak runs it.
//
// A run leaves its history entry and, with it, its trace: what the
// history keeps is bounded by its capacity, and goes with the entry. So
// the history here holds as many runs as the warm-up makes: full after
// it, each later run evicts one, and whatever a run leaves that its
// entry's eviction does not remove counts as left behind.
func BenchmarkSoak(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the soak benchmark reads /proc")
	}
	const total, wave, warmup = 300, 4, 8
	// A TMPDIR of its own, short as one is (the browser's socket lives
	// there): what runs leave in it is counted.
	tmp, err := os.MkdirTemp("", "soak")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	b.Setenv("TMPDIR", tmp)
	e := newBrowserEnvWith(b, envOptions{config: func(c *runner.Config) {
		c.MaxConcurrent = wave
		h, err := history.Open(filepath.Join(c.DataDir, "history.jsonl"), history.Options{Capacity: warmup})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close() })
		c.History = h
	}})
	browserPID := e.tabs.Process().Pid()
	// The test site's idle keep-alive connections (a goroutine and a
	// socket each, as long as the browser keeps them) are not the
	// library's.
	e.site.Config.SetKeepAlivesEnabled(false)
	src := `// @permissions browser write=out.txt
import { context, tabs } from "tranquil/automation";
const tab = await tabs.open("` + e.site.URL + `/p/" + context.runId, { background: true });
const title = await tab.title();
await Deno.writeTextFile("out.txt", title);
await tab.close();
await context.result(title);
`
	script := filepath.Join(e.dir, "soak.ts")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	runWave := func(n int) {
		var started []*runner.Run
		for range n {
			r, err := e.m.Start(context.Background(), runner.Request{Script: script})
			if err != nil {
				b.Fatal(err)
			}
			started = append(started, r)
		}
		for _, r := range started {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			entry, err := r.Wait(ctx)
			cancel()
			if err != nil || entry.State != history.StateSucceeded {
				b.Fatalf("run %s: %v %s %s", r.ID(), err, entry.State, entry.Reason)
			}
		}
	}
	dirs := []string{tmp, filepath.Join(filepath.Dir(e.dir), "data"), e.dir}
	measure := func() soakCounts {
		tabs, _ := e.tabs.All(context.Background(), runner.RunInfo{})
		return soakCounts{
			goroutines: runtime.NumGoroutine(),
			fds:        countFDs(),
			procs:      countDescendants(os.Getpid(), browserPID),
			files:      countFiles(dirs...),
			tabs:       len(tabs),
		}
	}
	for b.Loop() {
		runWave(warmup)
		base := settle(measure, soakCounts{})
		var mid uint64
		for done := 0; done < total; done += wave {
			runWave(wave)
			if mid == 0 && done+wave >= total/2 {
				mid = heapInUse()
			}
		}
		left := settle(measure, base).minus(base)
		end := heapInUse()
		b.ReportMetric(float64(total), "runs")
		b.ReportMetric(float64(left.goroutines), "leaked-goroutines")
		b.ReportMetric(float64(left.fds), "leaked-fds")
		b.ReportMetric(float64(left.procs), "leaked-procs")
		b.ReportMetric(float64(left.files), "leaked-files")
		b.ReportMetric(float64(left.tabs), "leaked-tabs")
		b.ReportMetric(float64(end)/float64(mid), "heap-ratio")
		b.ReportMetric((float64(end)-float64(mid))/1024, "heap-growth-KiB")
		if left != (soakCounts{}) {
			buf := make([]byte, 1<<20)
			b.Errorf("after %d runs, left behind: %+v\n%s", total, left, buf[:runtime.Stack(buf, true)])
		}
	}
}

type soakCounts struct{ goroutines, fds, procs, files, tabs int }

func (c soakCounts) minus(d soakCounts) soakCounts {
	return soakCounts{c.goroutines - d.goroutines, c.fds - d.fds, c.procs - d.procs, c.files - d.files, c.tabs - d.tabs}
}

// settle measures until the counts stop exceeding base (what ends after
// a run, such as a renderer or a closing socket, ends a moment later), for
// at most 10 seconds. With a zero base it waits for two equal readings.
func settle(measure func() soakCounts, base soakCounts) soakCounts {
	deadline := time.Now().Add(10 * time.Second)
	last := measure()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		c := measure()
		if base != (soakCounts{}) && c.minus(base) == (soakCounts{}) || base == (soakCounts{}) && c == last {
			return c
		}
		last = c
	}
	return last
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func countFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

// countDescendants counts the live processes below pid, leaving out the
// subtree of except.
func countDescendants(pid, except int) int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err != nil || state == "Z" {
			continue
		}
		children[ppid] = append(children[ppid], p)
	}
	n := 0
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			if c != except {
				n++
				walk(c)
			}
		}
	}
	walk(pid)
	return n
}

// countFiles counts the files and folders under dirs, each once where
// one dir holds another, leaving out browser profiles (the browser's own,
// removed when it closes).
func countFiles(dirs ...string) int {
	seen := map[string]bool{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil || p == d {
				return nil
			}
			if de.IsDir() && strings.HasPrefix(de.Name(), "tranquil-browser-") {
				return filepath.SkipDir
			}
			seen[p] = true
			return nil
		})
	}
	return len(seen)
}
