//go:build !windows

package permissions_test

import (
	"fmt"

	"github.com/tranquil/automation/permissions"
)

// script is where the examples' script lives; example_windows_test.go
// has the same examples with Windows paths.
const script = "/srv/example-scripts/report/job.ts"

func ExampleParse() {
	src := []byte(`// Weekly report
// @permissions browser net=api.github.com write=report.md
// @timeout 15m
import { tabs } from "tranquil/automation";
`)
	h, err := permissions.Parse(src, script)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Canonical())
	fmt.Println(h.Capabilities())
	for _, d := range h.Describe() {
		fmt.Printf("[%s] %s\n", d.Risk, d.Text)
	}
	// Output:
	// browser net=api.github.com write=/srv/example-scripts/report/report.md timeout=15m
	// [config context paneControls tab tabs ui workspace]
	// [high] can see and control your browser tabs, including sites where you are signed in, but not reach services on this computer or devices on your local network from them
	// [medium] can connect to api.github.com
	// [medium] can create, change and delete /srv/example-scripts/report/report.md (and everything inside, if it is or becomes a folder); can save files that pages download into /srv/example-scripts/report/report.md
	// [low] can run for up to 15m
}

func ExampleFlags() {
	h, err := permissions.Parse([]byte("// @permissions net=api.github.com read=input.txt\n"), script)
	if err != nil {
		fmt.Println(err)
		return
	}
	flags, err := permissions.Flags(h, permissions.FlagConfig{
		BridgeAddr:   "127.0.0.1:40000",
		Bootstrap:    "/opt/app/sdk/main.ts",
		SDKDir:       "/opt/app/sdk",
		ConfigPath:   "/opt/app/sdk/deno.json",
		DenyLoopback: []string{"127.0.0.1:9222"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range flags {
		fmt.Println(f)
	}
	// Output:
	// --no-prompt
	// --no-lock
	// --config=/opt/app/sdk/deno.json
	// --location=http://06e185a9cb2e5b6c635d4c99d031c84f.invalid/
	// --allow-net=127.0.0.1:40000,api.github.com
	// --deny-net=0.0.0.0/8,10.0.0.0/8,100.64.0.0/10,169.254.0.0/16,172.16.0.0/12,192.168.0.0/16,[::1],[::],127.0.0.0/8:9222,0.0.0.0/8:9222,[::1]:9222,[::]:9222
	// --allow-env=TRANQUIL_CALL_SITES,TRANQUIL_ENTRY,TRANQUIL_RPC_TOKEN,TRANQUIL_RPC_URL,TRANQUIL_RUN_ID,TRANQUIL_SCRIPT_DIR,TRANQUIL_TRIGGER
	// --allow-read=/opt/app/sdk/main.ts,/srv/example-scripts/report/job.ts,/opt/app/sdk,/srv/example-scripts/report/input.txt
	// --no-remote
	// --cached-only
}
