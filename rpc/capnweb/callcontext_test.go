package capnweb

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// labelKey is the context key the test's CallContext sets.
type labelKey struct{}

// labelAPI echoes its argument and the label its context carries.
type labelAPI struct{}

func (labelAPI) Echo(ctx context.Context, s string) []any {
	label, _ := ctx.Value(labelKey{}).(string)
	return []any{s, label}
}

// Options.CallContext sees each call's arguments before the method does:
// it can take a trailing one off into the method's context, and leaves a
// call it does not recognise as it came.
func TestCallContextTakesTrailingArgument(t *testing.T) {
	opts := &Options{CallContext: func(ctx context.Context, args []any) (context.Context, []any) {
		if n := len(args); n > 0 {
			if s, ok := args[n-1].(string); ok && len(s) > 0 && s[0] == '@' {
				return context.WithValue(ctx, labelKey{}, s[1:]), args[:n-1]
			}
		}
		return ctx, args
	}}
	_, main := sessionPair(t, labelAPI{}, opts)
	ctx := context.Background()
	got, err := main.CallMethod(ctx, "echo", "a", "@line 12")
	require.NoError(t, err)
	require.Equal(t, []any{"a", "line 12"}, got)
	got, err = main.CallMethod(ctx, "echo", "b")
	require.NoError(t, err)
	require.Equal(t, []any{"b", ""}, got)
}
