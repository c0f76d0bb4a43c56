package runner

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/rpc/capnweb"
)

// TestEncodePlainIsJSONStringify: what a script sends to be kept is
// encoded as JSON.stringify would, and what JSON cannot hold is refused in
// JavaScript's words, whether or not the SDK checked it first.
func TestEncodePlainIsJSONStringify(t *testing.T) {
	obj := func(kv ...any) *capnweb.Object {
		o := &capnweb.Object{}
		for i := 0; i < len(kv); i += 2 {
			o.Set(kv[i].(string), kv[i+1])
		}
		return o
	}
	u := capnweb.Undefined{}
	for _, c := range []struct {
		in   any
		want string
	}{
		{obj("a", 1.0, "gone", u, "list", []any{1.0, u, obj("b", u, "c", "x")}), `{"a":1,"list":[1,null,{"c":"x"}]}`},
		{[]any{u}, `[null]`},
		{obj("z", 1.0, "a", 2.0), `{"z":1,"a":2}`}, // the script's order
		{nil, `null`},
	} {
		got, err := encodePlain(c.in)
		require.NoError(t, err)
		assert.Equal(t, c.want, string(got))
	}
	for _, c := range []struct {
		in   any
		want string
	}{
		{u, "undefined is not plain JSON"},
		{math.NaN(), "NaN is not a JSON number"},
		{obj("n", new(big.Int)), "bigint is not plain JSON"},
		{[]any{capnweb.InvalidDate{}}, "Date is not plain JSON"},
		{[]byte{1}, "bytes is not plain JSON"},
	} {
		_, err := encodePlain(c.in)
		require.Error(t, err, "%v", c.in)
		assert.Equal(t, c.want, err.Error())
		assert.False(t, hasGoWording(err.Error()), err.Error())
	}
}
