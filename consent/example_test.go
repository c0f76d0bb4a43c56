package consent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/permissions"
)

func ExampleGate_Authorize() {
	dir, _ := os.MkdirTemp("", "consent-example")
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	script := filepath.Join(dir, "job.ts")
	src := []byte("// @permissions browser run=git\n")
	_ = os.WriteFile(script, src, 0o644)

	store, _ := consent.OpenStore(filepath.Join(dir, "consent.json"), consent.StoreOptions{})
	ask := consent.PrompterFunc(func(_ context.Context, req consent.Request) (consent.Answer, error) {
		fmt.Println("first run:", req.FirstRun)
		for _, d := range req.Added {
			fmt.Printf("  [%s] %s\n", d.Risk, d.Text)
		}
		return consent.Approve, nil
	})
	gate := consent.NewGate(store, ask)

	h, _ := permissions.Parse(src, script)
	d, err := gate.Authorize(context.Background(), script, h)
	fmt.Println("prompted:", d.Prompted, "error:", err)
	d, err = gate.Authorize(context.Background(), script, h)
	fmt.Println("prompted:", d.Prompted, "error:", err)
	// Output:
	// first run: true
	//   [high] can see and control your browser tabs, including sites where you are signed in, but not reach services on this computer or devices on your local network from them
	//   [high] can run commands as you, with your full access: git
	// prompted: true error: <nil>
	// prompted: false error: <nil>
}
