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
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
)

func loopbackServer(html string) *httptest.Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", testenv.LoopbackCSP)
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

	proc, err := launch.Chromium(ctx, launch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer proc.Close()
	browser := proc.Browser() // the browser's one connection, over its pipe
	tab, err := browser.NewTabWith(ctx, srv.URL, cdp.TabOptions{
		Sites: []string{"127.0.0.1"},
		Log:   func(a cdp.Action) { fmt.Println(a.Method, a.Outcome) },
	})
	if err != nil {
		log.Fatal(err)
	}
	st, err := tab.Fill(ctx, cdp.Locator{Label: "Email"}, "ada@example.com", cdp.FormOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Value, st.Invalid)
	// Output:
	// goto ok
	// fill ok
	// ada@example.com false
}

// Evaluate passes arguments by value and awaits promises.
func ExampleTab_Evaluate() {
	srv := loopbackServer(`<title>Hello</title>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := launch.Chromium(ctx, launch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer proc.Close()
	browser := proc.Browser() // the browser's one connection, over its pipe
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
