package history

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/atomicfile"
)

// BenchmarkPut measures Put of a finished run with a 64 KiB output into a
// full Store (100 such runs), the journal's compactions included, against
// two references interleaved in the same run:
//
//   - writefile: os.WriteFile of the same line, no fsync — the cost of the
//     bytes alone, the floor;
//   - rewrite: the alternative design, replacing the whole file (100
//     entries) atomically with fsync on every Put.
//
// It reports medians and p99s in µs, put/writefile as "ratio" and
// rewrite/put as "rewrite-x".
func BenchmarkPut(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(filepath.Join(dir, "history.jsonl"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	mk := func(i int) Entry {
		code := 0
		start := t0.Add(time.Duration(i) * time.Second)
		return Entry{
			ID: fmt.Sprintf("run-%06d", i), State: StateSucceeded, ExitCode: &code,
			Start: start, End: start.Add(time.Second), Duration: time.Second,
			Script: "/scripts/bench.ts", Output: strings.Repeat(fmt.Sprintf("line %d of output\n", i), 64<<10/18),
			Result: []byte(`{"ok":true}`), Permissions: "// @permissions ui",
		}
	}
	for i := range DefaultCapacity {
		if err := s.Put(mk(i)); err != nil {
			b.Fatal(err)
		}
	}
	peer := filepath.Join(dir, "peer")
	whole := filepath.Join(dir, "whole")
	var put, wf, rw []time.Duration
	i := DefaultCapacity
	for b.Loop() {
		e := mk(i)
		i++
		start := time.Now()
		if err := s.Put(e); err != nil {
			b.Fatal(err)
		}
		put = append(put, time.Since(start))

		ne, _ := normalize(e)
		line, _ := encodeEntry(ne)
		start = time.Now()
		if err := os.WriteFile(peer, line, 0o600); err != nil {
			b.Fatal(err)
		}
		wf = append(wf, time.Since(start))

		start = time.Now()
		s.mu.Lock()
		all := s.runs.sorted()
		s.mu.Unlock()
		data, err := encodeFile("0123456789abcdef", all)
		if err == nil {
			err = atomicfile.WriteFile(whole, data, 0o600)
		}
		if err != nil {
			b.Fatal(err)
		}
		rw = append(rw, time.Since(start))
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(quantile(put, 0.5)), "put-µs")
	b.ReportMetric(us(quantile(put, 0.99)), "put-p99-µs")
	b.ReportMetric(us(quantile(wf, 0.5)), "writefile-µs")
	b.ReportMetric(us(quantile(rw, 0.5)), "rewrite-µs")
	b.ReportMetric(us(quantile(rw, 0.99)), "rewrite-p99-µs")
	b.ReportMetric(float64(quantile(put, 0.5))/float64(quantile(wf, 0.5)), "ratio")
	b.ReportMetric(float64(quantile(rw, 0.5))/float64(quantile(put, 0.5)), "rewrite-x")
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkOpen measures opening a journal at its largest: twice the
// default capacity in lines, each a run with a 64 KiB output.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "history.jsonl")
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	out := strings.Repeat("x", 64<<10)
	for i := range 2 * DefaultCapacity {
		if err := s.Put(Entry{ID: fmt.Sprint(i), State: StateSucceeded, Start: t0.Add(time.Duration(i) * time.Second), Output: out}); err != nil {
			b.Fatal(err)
		}
	}
	fi, _ := os.Stat(path)
	for b.Loop() {
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
}
