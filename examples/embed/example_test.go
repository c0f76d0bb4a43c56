package embed_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

// The host's side: a UI, a clipboard and a workspace. A desktop host
// implements them with its own windows; these print.
type ui struct{}

func (ui) Notify(_ context.Context, run runner.RunInfo, msg string, level runner.Level) error {
	fmt.Printf("notify %s: %s\n", level, msg)
	return nil
}

func (ui) Open(_ context.Context, run runner.RunInfo, path string, o runner.OpenOptions) error {
	fmt.Println("open", path)
	return nil
}

type clipboard struct {
	mu   sync.Mutex
	text string
}

func (c *clipboard) Read(context.Context, runner.RunInfo) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text, nil
}

func (c *clipboard) Write(_ context.Context, _ runner.RunInfo, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = text
	return nil
}

type workspace string

func (w workspace) ProjectDir(context.Context, runner.RunInfo) (string, error) { return string(w), nil }

// Example wires a run manager into a host and runs one script.
func Example() {
	ctx := context.Background()
	data, err := os.MkdirTemp("", "host-data") // a real host: its app data folder
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(data)

	// The browser. This one is a headless Chromium of its own; a host whose
	// tabs live elsewhere implements runner.Tabs over them.
	tabs, err := cdptabs.Launch(ctx, launch.Options{Path: os.Getenv("TRANQUIL_CHROMIUM")})
	if err != nil {
		log.Fatal(err)
	}
	defer tabs.Shutdown()

	// Consent: approvals on disk, and the host's dialog as the Prompter.
	store, err := consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	gate := consent.NewGate(store, consent.PrompterFunc(func(ctx context.Context, req consent.Request) (consent.Answer, error) {
		for _, g := range req.Grants {
			fmt.Printf("asks to: %s\n", g.Text)
		}
		return consent.Approve, nil // a real host shows the lines and waits for the user
	}))

	m, err := runner.New(runner.Config{
		DataDir:  data,
		CacheDir: os.Getenv("DENO_DIR"), // empty: <DataDir>/deno-cache
		DenoPath: os.Getenv("TRANQUIL_DENO"),
		Host: runner.Host{
			UI:        ui{},
			Clipboard: &clipboard{text: "hello"},
			Workspace: workspace(data),
			Tabs:      tabs,
		},
		Gate: gate,
		OnEvent: func(ev runner.Event) {
			if ev.Kind == runner.EventOutput {
				fmt.Println("script says:", ev.Line)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	script := filepath.Join(data, "hello.ts")
	err = os.WriteFile(script, []byte(`// @permissions browser clipboard
import { clipboard, context, tabs, ui } from "tranquil/automation";
const text = await clipboard.read();
await ui.notify("the clipboard holds " + text.length + " characters");
console.log((await tabs.all()).length + " tab(s) open");
await context.result({ text });
`), 0o644)
	if err != nil {
		log.Fatal(err)
	}

	run, err := m.Start(ctx, runner.Request{Script: script, Trigger: "manual"})
	if err != nil {
		log.Fatal(err)
	}
	entry, err := run.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(entry.State, string(entry.Result))
	// Output:
	// asks to: can see and control your browser tabs, including sites where you are signed in, but not reach services on this computer or devices on your local network from them
	// asks to: can read and replace what you copy, which may include passwords
	// notify info: the clipboard holds 5 characters
	// script says: 1 tab(s) open
	// succeeded {"text":"hello"}
}
