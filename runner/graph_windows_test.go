//go:build windows

package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/importtable"
	"github.com/tranquil/automation/internal/testenv"
)

// TestPlanOfAScriptAtAWindowsPath: a script at a drive path plans and runs
// (deno info once read C:\… as a module of scheme c:, and every run was
// refused), also when named by its 8.3 short name; an import written as a
// Windows path is refused with the way to write it.
func TestPlanOfAScriptAtAWindowsPath(t *testing.T) {
	e := newMgr(t, nil)
	ctx := context.Background()
	e.script(t, "My Scripts/lib.ts", "export const v = 1;\n")
	long := e.script(t, "My Scripts/main.ts", "// @permissions read=lib.ts\nimport { v } from \"./lib.ts\";\nconsole.log(\"v is\", v);\n")
	require.True(t, importtable.IsDrivePath(long), long)
	short := testenv.ShortPath(t, long)
	require.NotEqual(t, long, short, "My Scripts has a short name")
	for _, p := range []string{long, short} {
		plan, err := e.m.Plan(ctx, Request{Script: p})
		require.NoError(t, err)
		require.NoError(t, plan.Refused, p)
		_, entry := e.run(t, Request{Script: p})
		require.Equal(t, history.StateSucceeded, entry.State, "%s: %s %s", p, entry.Reason, entry.Output)
		assert.Contains(t, entry.Output, "v is 1")
	}

	lib := e.script(t, "lib.ts", "export const v = 2;\n")
	drive := e.script(t, "drive.ts", fmt.Sprintf("// @permissions read=%s\nimport { v } from %q;\nconsole.log(v);\n", lib, lib))
	plan, err := e.m.Plan(ctx, Request{Script: drive})
	require.NoError(t, err)
	require.True(t, errors.Is(plan.Refused, ErrRemoteImport), "%v", plan.Refused)
	assert.Contains(t, plan.Refused.Error(), "deno reads a Windows path in an import as a URL")
}
