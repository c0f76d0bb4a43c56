package rpc_test

import (
	"context"
	"fmt"

	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc"
)

type notifier struct{ run string }

// Notify is reachable from the script as ui.notify(msg).
func (n *notifier) Notify(ctx context.Context, msg string) error {
	fmt.Printf("run %s says %q\n", n.run, msg)
	return nil
}

func ExampleBridge() {
	reg := &rpc.Registry{}
	reg.Register(permissions.CapUI, func(_ context.Context, p rpc.Principal) (any, error) {
		return &notifier{run: p.RunID}, nil
	}, rpc.AudienceRunner)

	b, err := rpc.New(rpc.Config{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	tok, _ := b.Mint(rpc.Principal{
		RunID:     "run-1",
		Permitted: []permissions.Capability{permissions.CapUI},
	})
	// Give the run b.RunURL(tok) and tok through its environment.
	fmt.Println(len(tok), b.RunURL(tok)[:len("ws://127.0.0.1:")])
	// Output: 64 ws://127.0.0.1:
}
