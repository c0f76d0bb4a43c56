package runner

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// A loop that reuses a step's name gets no stale answer: the second turn
// fails with code invalid, naming the step and how to name loop steps,
// and an uncaught one fails the run; named apart, every turn runs.
func TestStepNameReusedInALoopIsRefused(t *testing.T) {
	e := newMgr(t, nil)
	entry := e.runScript(t, "invoices.ts", `// @permissions none
import { context, step } from "tranquil/automation";
const totals: Record<number, number> = { 1: 10, 2: 20, 3: 30 };
const seen: unknown[] = [];
for (const id of [1, 2, 3]) {
  try {
    seen.push(await step.do("read invoice", () => totals[id]));
  } catch (e) {
    seen.push((e as { code?: string }).code + ": " + (e as Error).message.split("\n")[0]);
  }
}
for (const id of [1, 2, 3]) seen.push(await step.do(`+"`read invoice ${id}`"+`, () => totals[id]));
await context.result(seen);
`)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	var seen []any
	require.NoError(t, json.Unmarshal(entry.Result, &seen))
	require.Len(t, seen, 6)
	assert.Equal(t, float64(10), seen[0])
	for _, s := range seen[1:3] {
		msg, _ := s.(string)
		assert.Contains(t, msg, `invalid: step name "read invoice" is already used in this run`)
		assert.Contains(t, msg, "step.do(`read invoice ${id}`")
	}
	assert.Equal(t, []any{float64(10), float64(20), float64(30)}, seen[3:])

	entry = e.runScript(t, "uncaught.ts", `// @permissions none
import { step } from "tranquil/automation";
for (const id of [1, 2]) await step.do("read invoice", () => id);
`)
	assert.Equal(t, history.StateFailed, entry.State)
	assert.Contains(t, entry.FirstError, `step name "read invoice" is already used in this run`)
}
