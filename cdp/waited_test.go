package cdp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A wait that ran out its deadline reports the time it was given, however
// late the machine noticed: a script that asked for 1.5 s reads "1.5 s" on
// a busy machine too. A wait cut short otherwise reports what it took.
func TestWaitedSinceIsTheBudgetThatRanOut(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(30*time.Millisecond))
	defer cancel()
	<-ctx.Done()
	time.Sleep(80 * time.Millisecond) // noticed late
	assert.Equal(t, 30*time.Millisecond, waitedSince(ctx, start))

	ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	cancel()
	assert.Less(t, waitedSince(ctx, start), time.Hour, "a cancelled wait took what it took")
	assert.GreaterOrEqual(t, waitedSince(ctx, start), 110*time.Millisecond)
}
