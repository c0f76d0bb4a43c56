package cdp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/testenv"
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

	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{})
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
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{})
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

// A Launcher starts a browser, reads its state and removes every trace of
// it again.
func ExampleLauncher() {
	srv := loopbackServer(`<title>Inbox</title><h1>3 unread</h1><input id=search autofocus>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	l := cdp.NewLauncher(cdp.LauncherOptions{})
	inst, err := l.Launch(ctx, cdp.LaunchSpec{ExecutablePath: "/usr/bin/chromium", Kind: cdp.KindChromium})
	if err != nil {
		log.Fatal(err)
	}
	targets, err := inst.Browser.Targets(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tab, err := inst.Browser.Attach(ctx, targets[0].ID)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tab.Goto(ctx, srv.URL, cdp.Load); err != nil {
		log.Fatal(err)
	}
	p, err := l.Probe(ctx, inst.ID, 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Title, "|", p.Text, "|", p.Focused)

	reports, err := l.Cleanup(ctx, inst.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range reports[0].Steps {
		fmt.Println(s.Name, s.Outcome)
	}
	// Output:
	// Inbox | 3 unread | input#search
	// connection ok
	// process ok
	// port skipped
	// profile ok
}

// A policy refusal names the list and the entry.
func ExampleLauncher_Launch_policy() {
	l := cdp.NewLauncher(cdp.LauncherOptions{})
	_, err := l.Launch(context.Background(), cdp.LaunchSpec{
		ExecutablePath: "/usr/bin/chromium",
		Allow:          []string{"chromium"},
		Deny:           []string{"/usr/bin"},
	})
	fmt.Println(errors.Is(err, cdp.ErrPolicyBlocked))
	var pe *cdp.PolicyError
	if errors.As(err, &pe) {
		fmt.Println(pe.List, pe.Entry, pe.Field)
	}
	// Output:
	// true
	// deny /usr/bin app path
}

// QA checks a page the way a release smoke test would.
func ExampleQA() {
	srv := loopbackServer(`<title>App</title><nav id=explorer>Explorer</nav><script>console.error("oops")</script>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer proc.Close()
	browser := proc.Browser() // the browser's one connection, over its pipe
	tab, err := browser.NewTab(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tab.Goto(ctx, srv.URL, cdp.Load); err != nil {
		log.Fatal(err)
	}
	r, err := cdp.QA(ctx, tab, cdp.QAOptions{ExpectedText: "Explorer", ExpectedSelector: "#explorer", CheckConsole: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pass:", r.Pass)
	for _, c := range r.Checks {
		fmt.Printf("%s %t %q\n", c.Name, c.Pass, c.Detail)
	}
	// Output:
	// pass: false
	// text true ""
	// selector true ""
	// console false "1 console error(s): oops"
}

// Discover lists the Electron apps installed for this user.
func ExampleDiscover() {
	d, err := cdp.Discover(context.Background(), "code", 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, app := range d.Apps {
		fmt.Println(app.Name, app.ExecutablePath, app.Sensitive)
	}
}
