package cdp

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Choosing an option of an open custom dropdown: finding it (typed into
// the widget's filter, or scrolled to in a list that renders only what is
// in view) and clicking it where the click is checked to land.

// clickOption clicks the option named option of the dropdown el (opened
// already, or a listbox), once it shows. The options usually render after
// the opening click, or only once the filter holds some text: when none
// matches and the widget focused a filter field, option is typed there,
// once. When none matches and the options sit in a list that scrolls, the
// list is scanned for it from its top, a view at a time; a list scrolled
// to its end without it is errcode.NoOption at once. A click the page
// moved another option under (a list still animating open) is held back
// before the page sees it, and the option is looked for again.
func (fm *forms) clickOption(ctx context.Context, el *ready, desc, option string, parts map[string]string) error {
	optDesc := fmt.Sprintf("option %q of %s", option, desc)
	typed, ended := false, false
	opened := time.Now()
	scanID := func() string { return strconv.FormatInt(opened.UnixNano(), 36) }
	var at struct {
		X, Y float64
		Type bool `json:"type"`
		End  bool `json:"end"`
	}
	mendable := func(err error) bool { return !ended && waitable(err, false) }
	return fm.untilWith(ctx, DefaultFormWait, mendable, func(ctx context.Context) error {
		at.Type, at.End = false, false
		err := fm.formCallIn(ctx, el.frame, optDesc, &at, "optionAt", el.Ref, option, parts, typed, scanID(), scanBudget(ctx))
		if err != nil && (el.Mode == "combobox" || el.Closed) && time.Since(opened) > reopenAfter {
			// A widget still settling from its last choice can let the
			// opening click pass; a person seeing it stay shut clicks again.
			var st struct {
				Expanded bool `json:"expanded"`
			}
			if e := fm.formCallIn(ctx, el.frame, desc, &st, "shown", el.Ref, parts); e == nil && !st.Expanded {
				opened = time.Now()
				if e := fm.p.click(ctx, el.frame, el.X, el.Y, nil); e != nil {
					return e
				}
			}
		}
		switch {
		case err != nil:
			return err
		case at.Type:
			typed = true
			if err := fm.typeKeys(ctx, el.frame, option); err != nil {
				return err
			}
			return &LocatorError{Code: errcode.NoOption, Target: optDesc, Message: "typed the option into the filter; waiting for it to show"}
		case at.End:
			ended = true
			return &LocatorError{Code: errcode.NoOption, Target: optDesc, Message: "no option matches; the list was scrolled through to its end"}
		}
		x, y, err := fm.p.pagePoint(ctx, el.frame, at.X, at.Y)
		if err != nil {
			return err
		}
		return fm.p.click(ctx, el.frame, x, y, func(ctx context.Context) error {
			return fm.formCallIn(ctx, el.frame, optDesc, nil, "clickLanded")
		})
	})
}

// scanBudget is how long one optionAt call may scroll a list, in
// milliseconds: half of what is left of ctx (the rest answers the call
// and reads its reason), and no more than the page's own slice when ctx
// has no deadline.
func scanBudget(ctx context.Context) int64 {
	d, ok := ctx.Deadline()
	if !ok {
		return math.MaxInt32
	}
	return max(0, time.Until(d).Milliseconds()/2)
}
