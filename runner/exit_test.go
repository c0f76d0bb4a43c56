package runner

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// TestScriptThatEndsItself holds a run that ends itself, by Deno.exit or
// context.exit, to the code it gave: 0 succeeded, any other failed with
// that code (a 3 is the script's, not the bootstrap's refusal), and
// nothing after the exit runs.
func TestScriptThatEndsItself(t *testing.T) {
	t.Parallel() // see parallel_test.go
	e := newMgr(t, nil)
	const head = "// @permissions none\nimport { context } from \"tranquil/automation\";\nawait context.result(\"before\");\n"
	for _, c := range []struct {
		name, end string
		state     history.State
		code      int
	}{
		{"deno0.ts", "Deno.exit(0);", history.StateSucceeded, 0},
		{"context0.ts", "await context.exit();", history.StateSucceeded, 0},
		{"deno3.ts", "Deno.exit(3);", history.StateFailed, 3},
		{"context3.ts", "await context.exit(3);", history.StateFailed, 3},
		{"context5.ts", "context.log(\"last words\");\nawait context.exit(5);", history.StateFailed, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			entry := e.runScript(t, c.name, head+c.end+"\nconsole.log(\"after the exit\");\nawait context.result(\"after\");\n")
			require.Equal(t, c.state, entry.State, "reason %q output:\n%s", entry.Reason, entry.Output)
			require.NotNil(t, entry.ExitCode)
			assert.Equal(t, c.code, *entry.ExitCode)
			assert.JSONEq(t, `"before"`, string(entry.Result))
			assert.NotContains(t, entry.Output, "after the exit")
			if c.code != 0 {
				assert.Contains(t, entry.Reason, fmt.Sprintf("exit code %d", c.code))
			}
			if c.name == "context5.ts" {
				assert.Contains(t, entry.Output, "last words", "context.exit sends what the script logged first")
			}
		})
	}
}
