package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
)

// TestAttackFramesStayWholeBesideTheSDK runs the "large values" attack
// with each injected frame written in small parts, so that the frame the
// SDK writes on the same socket falls due between them. BenchmarkAttackSoak once saw this attack end with the
// script's own ECONNRESET: a frame of the SDK's (a release it had held
// for a few milliseconds) went out between two parts of an injected
// frame, the host read garbage, aborted for a protocol error before the
// budget and reset the socket under the script's write. The attack must
// end over its memory budget, each time.
func TestAttackFramesStayWholeBesideTheSDK(t *testing.T) {
	e := newMgr(t, func(c *Config) { c.SessionBudget = 32 << 20 })
	// In 16 KiB parts a frame takes 250 writes, each a turn of the
	// event loop: the release the SDK holds for 5 ms after the last call
	// ("ready") falls due inside the first frame.
	const whole = "const injectPart = Infinity;"
	require.Contains(t, rawFrames, whole)
	src := strings.Replace(rawFrames, whole, "const injectPart = 16 << 10;", 1) + memoryAttacks["large values"] +
		"\nawait new Promise((r) => setTimeout(r, 30000));\n"
	script := e.script(t, "attack-beside-sdk.ts", src)
	r, err := e.m.Start(context.Background(), Request{Script: script})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, history.StateFailed, entry.State, "%s\n%s", entry.Reason, entry.Output)
	require.True(t, strings.HasPrefix(entry.Reason, "limit_exceeded: "), "%s\n%s", entry.Reason, entry.Output)
	require.Contains(t, entry.Reason, "memory budget of 32 MiB")
}
