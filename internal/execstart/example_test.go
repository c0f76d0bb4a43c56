package execstart_test

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/tranquil/automation/internal/execstart"
)

func ExampleStart() {
	cmd, err := execstart.Start(context.Background(), func() (*exec.Cmd, error) {
		return exec.Command("go", "version"), nil
	})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	fmt.Println(cmd.Wait() == nil)
	// Output: true
}
