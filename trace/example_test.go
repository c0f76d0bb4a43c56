package trace_test

import (
	"fmt"
	"time"

	"github.com/tranquil/automation/trace"
)

func Example() {
	r := trace.NewRecorder("run-1", trace.Limits{})
	start := time.Now()
	r.Call(trace.Call{Method: "tab.fill", Target: `label "Email"`, Tab: "t1",
		Page: "https://example.test/signup?ref=mail", Start: start, Duration: 40 * time.Millisecond})
	r.Call(trace.Call{Method: "tab.click", Target: `role button "Send"`, Tab: "t1",
		Start: start, Duration: time.Second, Code: "not_found", Error: "no element matches the target"})
	r.Console(trace.ConsoleLine{At: time.Now(), Tab: "t1", Level: "error", Text: "form: missing field"})

	data, err := trace.Encode(r.Trace())
	if err != nil {
		panic(err)
	}
	tr, err := trace.Decode(data)
	if err != nil {
		panic(err)
	}
	for _, c := range tr.Calls {
		outcome := "ok"
		if !c.OK() {
			outcome = c.Code
		}
		fmt.Println(c.Seq, c.Method, c.Target, c.Page, outcome)
	}
	fmt.Println(tr.Console[0].Level, tr.Console[0].Text)
	// Output:
	// 1 tab.fill label "Email" https://example.test/signup ok
	// 2 tab.click role button "Send"  not_found
	// error form: missing field
}
