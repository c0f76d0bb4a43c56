package trace_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/trace"
)

// FuzzDecode: Decode either refuses its input with a CorruptError or
// returns a trace that encodes and decodes to itself.
func FuzzDecode(f *testing.F) {
	good, err := trace.Encode(sample())
	require.NoError(f, err)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Decode(data)
		if err != nil {
			require.ErrorIs(t, err, trace.ErrCorrupt)
			return
		}
		again, err := trace.Encode(tr)
		require.NoError(t, err)
		back, err := trace.Decode(again)
		require.NoError(t, err)
		require.Equal(t, tr, back)
	})
}
