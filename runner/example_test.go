package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner"
)

// A host runs a script that waits for the host's go-ahead: it starts the
// run, shows its step events, sends the event the script waits for, and
// reads the outcome from the run's history entry.
func Example() {
	deno, err := testenv.LookDeno() // a host passes its bundled deno
	if err != nil {
		fmt.Println("no deno:", err)
		return
	}
	data, _ := os.MkdirTemp("", "runner-example-")
	defer os.RemoveAll(data)
	script := filepath.Join(data, "scripts", "greet.ts")
	os.MkdirAll(filepath.Dir(script), 0o755)
	os.WriteFile(script, []byte(`// @permissions none
import { context, step } from "tranquil/automation";
const go = await step.waitForEvent("go");
await context.result({ hello: (go.payload as { name: string }).name });
`), 0o644)

	store, err := consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cache, _ := os.UserCacheDir() // where deno already cached the SDK's dependency
	m, err := runner.New(runner.Config{
		DataDir:  filepath.Join(data, "app"),
		CacheDir: filepath.Join(cache, "deno"),
		DenoPath: deno,
		// A "none" script needs no approval; a real host asks the user here.
		Gate: consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
			return consent.Deny, nil
		})),
		OnEvent: func(ev runner.Event) {
			if ev.Kind == runner.EventStep {
				fmt.Println("step", ev.Step.Name, ev.Step.Phase)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	ctx := context.Background()
	if err := m.Prepare(ctx); err != nil {
		fmt.Println(err)
		return
	}
	run, err := m.Start(ctx, runner.Request{Script: script})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := run.SendEvent(ctx, "go", map[string]string{"name": "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	entry, err := run.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	var result map[string]string
	json.Unmarshal(entry.Result, &result)
	fmt.Println(entry.State, result["hello"])
	// Output:
	// step go start
	// step go end
	// succeeded Ada
}
