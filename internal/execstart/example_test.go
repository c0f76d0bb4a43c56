package execstart_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/tranquil/automation/internal/execstart"
)

func ExampleStart() {
	self, err := os.Executable() // any program; this one runs everywhere the example does
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd, err := execstart.Start(context.Background(), func() (*exec.Cmd, error) {
		return exec.Command(self, "-test.run=^$"), nil
	})
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	fmt.Println(cmd.Wait() == nil)
	// Output: true
}
