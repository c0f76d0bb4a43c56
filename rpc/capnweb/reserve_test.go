package capnweb

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// JSONCost must bound what decoding builds, as the budget counts it, for
// every shape of value, and stay within a small factor of the heap the
// decoded value really takes, so that charging it first keeps the host
// within the budget.
func TestJSONCostBoundsTheDecodedTree(t *testing.T) {
	for _, doc := range []string{
		`null`, `true`, `1.5e3`, `"x"`, `[]`, `{}`,
		`[1,2,3,{"a":[true,false,null],"b":"\"q\\"}]`,
		`{"k":{"k":{"k":{"k":[[[[]]]]}}}}`,
		`[` + strings.TrimSuffix(strings.Repeat(`{"a":1,"b":"xy"},`, 1000), ",") + `]`,
		` [ 1 , -2.5E-3 , "\u00e9" ] `,
	} {
		v, err := DecodeJSON([]byte(doc))
		require.NoError(t, err, doc)
		tree, _ := measure(v, 1<<62, 0, 1<<10, true)
		require.GreaterOrEqual(t, JSONCost([]byte(doc)), tree, doc)
	}
}

func TestJSONCostAgainstTheHeap(t *testing.T) {
	// Many small objects: the shape that grows most when decoded.
	doc := []byte(`[` + strings.TrimSuffix(strings.Repeat(`{"id":12345,"ok":true,"n":"ab"},`, 50_000), ",") + `]`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := DecodeJSON(doc)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	heap := int64(after.TotalAlloc - before.TotalAlloc)
	cost := JSONCost(doc)
	runtime.KeepAlive(v)
	t.Logf("JSON %d bytes, decoded allocations %d bytes, JSONCost %d", len(doc), heap, cost)
	// The cost is charged before decoding: it must not be far below what
	// decoding allocates, nor so far above that ordinary values are refused.
	require.Greater(t, cost, heap/4)
	require.Less(t, cost, heap*4)
}

func TestReserveChargesTheSessionBudget(t *testing.T) {
	s := &Session{}
	s.mem.max = 1000
	require.NoError(t, s.Reserve(600, "a reply"))
	require.Equal(t, int64(400), s.MemoryLeft())
	err := s.Reserve(500, "another reply")
	require.ErrorIs(t, err, ErrLimit)
	require.Contains(t, err.Error(), "another reply")
	require.Equal(t, int64(400), s.MemoryLeft(), "a refused reserve takes nothing")
	s.Unreserve(600)
	require.Equal(t, int64(1000), s.MemoryLeft())
}
