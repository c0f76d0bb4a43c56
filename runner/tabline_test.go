package runner

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func seqOf(n int) *int { return &n }

// through reports whether p has gone through, without waiting.
func through(p *tabPlace) bool {
	select {
	case <-p.ch:
		return true
	default:
		return false
	}
}

// Places go through one at a time (the turn), in join order, and never
// more than the slots.
func TestTabLineTurnsAndSlots(t *testing.T) {
	var l tabLine
	l.init(2)
	a, b, c := l.join("r1", nil), l.join("r2", nil), l.join("r1", nil)
	assert.True(t, through(a))
	assert.False(t, through(b), "a has the turn until it opened")
	l.opened()
	assert.True(t, through(b))
	l.opened()
	assert.False(t, through(c), "both slots are held")
	l.release("r1")
	assert.True(t, through(c), "a released its slot")
	assert.True(t, l.await(context.Background(), c))
}

// A run's numbered opens join in number order, whatever order they
// arrive in, and behind what had joined before.
func TestTabLineNumberedOrder(t *testing.T) {
	var l tabLine
	l.init(1)
	first := l.join("other", nil)
	two, one := l.join("r", seqOf(2)), l.join("r", seqOf(1))
	assert.Empty(t, l.line, "1 and 2 wait for 0")
	zero := l.join("r", seqOf(0))
	require.Equal(t, []*tabPlace{zero, one, two}, l.line)
	order := []*tabPlace{first, zero, one, two}
	for i, p := range order {
		for _, q := range order[i+1:] {
			assert.False(t, through(q))
		}
		require.True(t, l.await(context.Background(), p))
		l.opened()
		l.release(p.run)
	}
}

// A number that never comes holds the later ones up for reorderWait only,
// and comes last if it comes at all.
func TestTabLineLostNumber(t *testing.T) {
	var l tabLine
	l.init(6) // a share of 3: the run's three opens all fit
	l.reorderWait = 10 * time.Millisecond
	one, two := l.join("r", seqOf(1)), l.join("r", seqOf(2))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, l.await(ctx, one), "1 stops waiting for 0")
	l.opened()
	require.True(t, l.await(ctx, two), "2 follows 1 without waiting again")
	l.opened()
	zero := l.join("r", seqOf(0))
	assert.True(t, through(zero), "the late 0 joins at once")
}

// An open that gives up leaves the line and holds nothing; an early one
// that gives up has its number skipped.
func TestTabLineGiveUp(t *testing.T) {
	var l tabLine
	l.init(1)
	held := l.join("x", nil)
	waiting := l.join("y", nil)
	early := l.join("r", seqOf(1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, l.await(ctx, waiting))
	assert.False(t, l.await(ctx, early))
	assert.Empty(t, l.line)

	zero, two := l.join("r", seqOf(0)), l.join("r", seqOf(2))
	assert.Equal(t, []*tabPlace{zero, two}, l.line, "1 gave up: 2 does not wait for it")
	require.True(t, l.await(context.Background(), held))
	l.opened()
	l.release("x")
	assert.True(t, through(zero))
}

// Forgetting a run lets its early places in, and its numbering starts
// over.
func TestTabLineForget(t *testing.T) {
	var l tabLine
	l.init(1)
	p := l.join("r", seqOf(3))
	l.forget("r")
	assert.True(t, through(p))
	assert.Empty(t, l.runs)
}

// One run holds at most half the slots (at least one): a run that opens
// tabs up to every slot and keeps them cannot hold up another run's open,
// its own further opens wait for its own tabs to go, and they keep their
// order among themselves.
func TestTabLineShare(t *testing.T) {
	var l tabLine
	l.init(4)
	var hog []*tabPlace
	for range 4 {
		hog = append(hog, l.join("hog", nil))
	}
	for _, p := range hog[:2] {
		require.True(t, l.await(context.Background(), p))
		l.opened()
	}
	assert.False(t, through(hog[2]), "the hog holds its share")
	assert.True(t, l.atShare("hog"))
	other := l.join("other", nil)
	assert.True(t, through(other), "another run's open passes the hog's waiting ones")
	l.opened()
	assert.False(t, through(hog[2]))
	l.release("other")
	assert.False(t, through(hog[2]), "a free slot is not the hog's while it holds its share")
	l.release("hog")
	assert.True(t, through(hog[2]), "the hog's own tab went")
	l.opened()
	assert.False(t, through(hog[3]))
	assert.Equal(t, map[string]int{"hog": 2}, l.held)

	var one tabLine
	one.init(1)
	a := one.join("a", nil)
	require.True(t, one.await(context.Background(), a))
	one.opened()
	assert.True(t, one.atShare("a"), "one slot: a share of one")
}
