package hosttest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/hosttest"
	"github.com/tranquil/automation/runner"
)

// Example runs a script against the test doubles, as a host's own test
// would, and checks what it did.
func Example() {
	if err := runExample(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// asked 1 time(s)
	// notify info: 2 tab(s); the clipboard held "hello"
	// clipboard: HELLO
	// succeeded
}

func runExample() error {
	ctx := context.Background()
	data, err := os.MkdirTemp("", "hosttest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)

	host := hosttest.New(data)
	host.Clipboard.SetText("hello")
	host.Tabs.Add("https://example.com/", "Example")
	host.Tabs.Add("https://example.org/", "Another")
	prompter := &hosttest.Prompter{Answer: consent.Approve}
	store, err := consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
	if err != nil {
		return err
	}
	m, err := runner.New(runner.Config{
		DataDir:  data,
		CacheDir: os.Getenv("DENO_DIR"),
		DenoPath: os.Getenv("TRANQUIL_DENO"),
		Host:     host.Runner(),
		Gate:     consent.NewGate(store, prompter),
	})
	if err != nil {
		return err
	}
	defer m.Close()

	script := filepath.Join(data, "job.ts")
	err = os.WriteFile(script, []byte(`// @permissions browser clipboard
import { clipboard, tabs, ui } from "tranquil/automation";
const text = await clipboard.read();
await ui.notify((await tabs.all()).length + " tab(s); the clipboard held " + JSON.stringify(text));
await clipboard.write(text.toUpperCase());
`), 0o644)
	if err != nil {
		return err
	}
	run, err := m.Start(ctx, runner.Request{Script: script})
	if err != nil {
		return err
	}
	entry, err := run.Wait(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("asked %d time(s)\n", len(prompter.Requests()))
	for _, n := range host.UI.Notifications() {
		fmt.Printf("notify %s: %s\n", n.Level, n.Message)
	}
	fmt.Println("clipboard:", host.Clipboard.Text())
	fmt.Println(entry.State)
	return nil
}

// ExampleRunScript runs a script against a real headless Chromium on a
// page the test serves. It needs deno and Chromium, so it has no output
// to check here; TestPickOpensTheSecondProduct runs the same.
func ExampleRunScript() {
	res, err := hosttest.RunScript(context.Background(), hosttest.Script{
		Path:    "testdata/pick.ts",
		Pages:   os.DirFS("testdata/pages"),
		Approve: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	if !res.Succeeded() || string(res.Entry.Result) != `"Coffee"` {
		log.Fatalf("the script opened the wrong page:\n%s", res.Explain())
	}
}
