package errcode_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tranquil/automation/errcode"
)

type coded struct{ c errcode.Code }

func (e *coded) Error() string           { return "coded" }
func (e *coded) ErrorCode() errcode.Code { return e.c }
func (e *coded) Is(target error) bool    { return target == error(e.c) }

// Of finds the first code in a chain, gives cancelled for a call called
// off (whatever it carries), timeout for a deadline and error for the
// rest.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want errcode.Code
	}{
		{nil, ""},
		{errors.New("plain"), errcode.Error},
		{fmt.Errorf("wrapped: %w", &coded{errcode.StaleRef}), errcode.StaleRef},
		{&coded{errcode.NotFound}, errcode.NotFound},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), errcode.Timeout},
		{context.Canceled, errcode.Cancelled},
		{fmt.Errorf("waited: %w", fmt.Errorf("x: %w", context.Canceled)), errcode.Cancelled},
		{fmt.Errorf("cut short: %w", errors.Join(&coded{errcode.Timeout}, context.Canceled)), errcode.Cancelled},
		{fmt.Errorf("outer: %w", errcode.Closed), errcode.Closed},
	} {
		if got := errcode.Of(tc.err); got != tc.want {
			t.Errorf("Of(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if !errors.Is(fmt.Errorf("w: %w", &coded{errcode.Hidden}), errcode.Hidden) {
		t.Error("errors.Is does not match a code")
	}
	if errors.Is(&coded{errcode.Hidden}, errcode.Disabled) {
		t.Error("errors.Is matches another code")
	}
}

// Every code appears once, has a meaning, and is spelled as scripts see it.
func TestCodes(t *testing.T) {
	seen := map[errcode.Code]bool{}
	for _, c := range errcode.Codes() {
		if seen[c] || c.Meaning() == "" {
			t.Errorf("%q: repeated or without a meaning", c)
		}
		seen[c] = true
	}
	if errcode.Code("nope").Meaning() != "" || errcode.Codes()[0] != errcode.NotFound {
		t.Error("the table changed shape")
	}
}
