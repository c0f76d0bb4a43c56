package history_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tranquil/automation/history"
)

func Example() {
	dir, _ := os.MkdirTemp("", "history-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "history.jsonl")

	s, err := history.Open(path, history.Options{Capacity: 100})
	if err != nil {
		log.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	run := history.Entry{ID: "run-1", Script: "/scripts/report.ts", Trigger: "manual", State: history.StateRunning, Start: start}
	if err := s.Put(run); err != nil {
		log.Fatal(err)
	}
	code := 0
	run.State, run.ExitCode = history.StateSucceeded, &code
	run.End = start.Add(2 * time.Second)
	run.Duration = run.End.Sub(run.Start)
	run.Result = json.RawMessage(`{"rows": 42}`)
	if err := s.Put(run); err != nil {
		log.Fatal(err)
	}
	s.Close()

	// A restarted host sees the same runs.
	s, err = history.Open(path, history.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for _, e := range s.List() {
		fmt.Println(e.ID, e.State, *e.ExitCode, e.Duration, string(e.Result))
	}
	// Output: run-1 succeeded 0 2s {"rows": 42}
}

func ExampleStore_Subscribe() {
	dir, _ := os.MkdirTemp("", "history-example")
	defer os.RemoveAll(dir)
	s, err := history.Open(filepath.Join(dir, "history.jsonl"), history.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// A live view: the callback runs on the Put's goroutine and must not
	// block, so it hands entries to a buffered channel.
	updates := make(chan history.Entry, 16)
	cancel := s.Subscribe(func(e history.Entry) {
		select {
		case updates <- e:
		default: // the view is behind; it will List when it catches up
		}
	})
	defer cancel()

	for _, st := range []history.State{history.StateQueued, history.StateRunning, history.StateCancelled} {
		s.Put(history.Entry{ID: "run-7", State: st, Reason: "user"})
	}
	close(updates)
	for e := range updates {
		fmt.Println(e.ID, e.State, e.State.Terminal())
	}
	// Output:
	// run-7 queued false
	// run-7 running false
	// run-7 cancelled true
}

func ExampleNewOutput() {
	out := history.NewOutput(24) // keep 12 bytes of head and 12 of tail
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(out, "step %d\n", i)
	}
	fmt.Println(out.Truncated())
	fmt.Println(strings.ReplaceAll(out.String(), "\n", "|"))
	// Output:
	// true
	// step 1|step |… 32 bytes omitted …|ep 7|step 8|
}
