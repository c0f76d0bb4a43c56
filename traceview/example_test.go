package traceview_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
	"github.com/tranquil/automation/traceview"
)

func Example() {
	dir, _ := os.MkdirTemp("", "traceview-example-")
	defer os.RemoveAll(dir)
	h, err := history.Open(filepath.Join(dir, "history.jsonl"), history.Options{})
	if err != nil {
		panic(err)
	}
	defer h.Close()
	// A runner stores these; here they are made by hand.
	h.Put(history.Entry{ID: "run-1", Script: "/scripts/signup.ts", State: history.StateFailed, Start: time.Now()})
	r := trace.NewRecorder("run-1", trace.Limits{})
	r.Call(trace.Call{Method: "tab.click", Target: `role button "Send"`, Start: time.Now(), Duration: time.Second, Code: "not_found"})
	data, _ := trace.Encode(r.Trace())
	h.PutTrace("run-1", data)

	// A host serves the view on a loopback listener of its own, e.g.
	// http.Serve(ln, view) with ln on 127.0.0.1.
	view := traceview.New(traceview.FromHistory(h), traceview.Options{})
	w := httptest.NewRecorder()
	view.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/run/run-1", nil))
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Println(w.Header().Get("Content-Security-Policy"))
	// Output:
	// 200 text/html; charset=utf-8
	// default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'
}
