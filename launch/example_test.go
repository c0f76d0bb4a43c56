package launch_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
)

// Chromium starts a headless browser of the host's own, reachable only
// over its pipe, and Close removes every trace of it.
func ExampleChromium() {
	srv := testenv.HTMLSite(`<title>Hello</title>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	proc, err := launch.Chromium(ctx, launch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer proc.Close()
	fmt.Println("port:", proc.Port(), "endpoint:", proc.Endpoint() == "")
	tab, err := proc.Browser().NewTab(ctx, srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	title, err := tab.Title(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(title)

	if err := proc.Close(); err != nil {
		log.Fatal(err)
	}
	_, err = os.Stat(proc.DataDir())
	fmt.Println("profile removed:", os.IsNotExist(err))
	// Output:
	// port: 0 endpoint: true
	// Hello
	// profile removed: true
}

// A Launcher starts a browser, reads its state and removes every trace of
// it again.
func ExampleLauncher() {
	srv := testenv.HTMLSite(`<title>Inbox</title><h1>3 unread</h1><input id=search autofocus>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	l := launch.NewLauncher(launch.LauncherOptions{})
	inst, err := l.Launch(ctx, launch.Spec{ExecutablePath: "/usr/bin/chromium", Kind: launch.KindChromium})
	if err != nil {
		log.Fatal(err)
	}
	targets, err := inst.Browser().Targets(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tab, err := inst.Browser().Attach(ctx, targets[0].ID)
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
	l := launch.NewLauncher(launch.LauncherOptions{})
	_, err := l.Launch(context.Background(), launch.Spec{
		ExecutablePath: "/usr/bin/chromium",
		Allow:          []string{"chromium"},
		Deny:           []string{"/usr/bin"},
	})
	fmt.Println(errors.Is(err, launch.ErrPolicyBlocked))
	var pe *launch.PolicyError
	if errors.As(err, &pe) {
		fmt.Println(pe.List, pe.Entry, pe.Field)
	}
	// Output:
	// true
	// deny /usr/bin app path
}

// QA checks a page the way a release smoke test would.
func ExampleQA() {
	srv := testenv.HTMLSite(`<title>App</title><nav id=explorer>Explorer</nav><script>console.error("oops")</script>`)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := launch.Chromium(ctx, launch.Options{})
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
	r, err := launch.QA(ctx, tab, launch.QAOptions{ExpectedText: "Explorer", ExpectedSelector: "#explorer", CheckConsole: true})
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
	d, err := launch.Discover(context.Background(), "code", 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, app := range d.Apps {
		fmt.Println(app.Name, app.ExecutablePath, app.Sensitive)
	}
}
