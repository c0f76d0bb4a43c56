package cdp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
)

// Launch a browser, open a tab, read the page and fill in a field.
func ExampleTab_Fill() {
	srv := testenv.HTMLSite(`<label for=e>Email</label><input id=e type=email>`)
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
	srv := testenv.HTMLSite(`<title>Hello</title>`)
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
