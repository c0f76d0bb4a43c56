package cdp_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/tranquil/automation/cdp"
)

func loopbackServer(html string) *httptest.Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, html)
	})}}
	s.Start()
	return s
}

// Launch a browser, open a tab, read the page and fill in a field.
func ExampleTab_Fill() {
	srv := loopbackServer(`<label for=e>Email</label><input id=e type=email>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer proc.Close()
	browser, err := cdp.Connect(ctx, proc.Endpoint(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer browser.Close()
	tab, err := browser.NewTab(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	if err := tab.Goto(ctx, srv.URL, cdp.Load); err != nil {
		log.Fatal(err)
	}
	st, err := tab.Fill(ctx, cdp.Target{Label: "Email"}, "ada@example.com", cdp.FormOptions{
		Sites: []string{"127.0.0.1"},
		Log:   func(a cdp.Action) { fmt.Println(a.Method, a.Target, a.Outcome) },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Value, st.Invalid)
	// Output:
	// fill label "Email" ok
	// ada@example.com false
}

// Evaluate passes arguments by value and awaits promises.
func ExampleTab_Evaluate() {
	srv := loopbackServer(`<title>Hello</title>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer proc.Close()
	browser, err := cdp.Connect(ctx, proc.Endpoint(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer browser.Close()
	tab, err := browser.NewTab(ctx, srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	if err := tab.WaitFor(ctx, cdp.Predicate(`() => document.readyState === "complete"`)); err != nil {
		log.Fatal(err)
	}
	v, err := tab.Evaluate(ctx, `async (greeting) => greeting + ", " + document.title`, "Hi")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(v))
	// Output: "Hi, Hello"
}
