package cdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tranquil/automation/errcode"
)

// Filling an ARIA slider that is no input (a div with role slider, as
// noUiSlider and Ionic draw them): it takes no text, so it is set as a
// person sets it from the keyboard, with the keys the ARIA slider pattern
// defines, until aria-valuenow reads the value.

// maxSliderKeys bounds the keys one fill presses: a slider of a thousand
// steps without page keys takes that many arrows.
const maxSliderKeys = 1000

// sliderState is what the runtime's sliderOf reads.
type sliderState struct {
	Now      *float64 `json:"now"`
	Min      float64  `json:"min"`
	Max      float64  `json:"max"`
	Text     string   `json:"text"`
	Vertical bool     `json:"vertical"`
}

// fillSlider is Fill on an ARIA slider; ok is false when loc is not one
// (the caller tries its other ways). value is a number within the
// slider's bounds. The slider is waited for as a click target is, focused,
// and driven with Home or End for its bounds, else Page Up/Down while
// they do not pass the value, then arrows; a slider whose steps pass over
// the value, or that stops moving, is a *NotCommittedError naming what
// it holds.
func (fm *forms) fillSlider(ctx context.Context, loc Locator, value string, opts FormOptions) (FieldState, bool, error) {
	desc := loc.String()
	el, err := fm.Resolve(ctx, loc)
	if err != nil {
		return FieldState{}, false, nil
	}
	read := func(focus bool) (sliderState, error) {
		var st sliderState
		err := fm.formCallIn(ctx, el.frame, desc, &st, "sliderOf", el.Ref, focus)
		return st, err
	}
	st, err := read(false)
	if errors.Is(err, errcode.NotEditable) {
		return FieldState{}, false, nil
	}
	if err != nil {
		return FieldState{}, true, err
	}
	want, perr := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if perr != nil || want < st.Min || want > st.Max {
		return FieldState{}, true, &LocatorError{Code: errcode.Invalid, Target: desc,
			Message: fmt.Sprintf("a slider takes a number from %s to %s", num(st.Min), num(st.Max))}
	}
	if opts.DryRun {
		return FieldState{}, true, nil
	}
	if err := fm.keysReady(ctx, el.Ref, desc, opts); err != nil {
		return FieldState{}, true, err
	}
	if st, err = read(true); err != nil {
		return FieldState{}, true, err
	}
	st, err = fm.slideTo(ctx, el.frame, want, st, func() (sliderState, error) { return read(false) })
	shown := sliderShown(st)
	if err == nil && (st.Now == nil || !same(*st.Now, want)) {
		err = &NotCommittedError{Target: desc, Kept: shown}
	}
	return FieldState{Value: shown}, true, err
}

// slideTo presses keys on the focused slider until it reads want, it
// would pass want, or it stops moving; it returns the last state read.
func (fm *forms) slideTo(ctx context.Context, fr string, want float64, st sliderState, read func() (sliderState, error)) (sliderState, error) {
	up, down := "ArrowRight", "ArrowLeft"
	if st.Vertical {
		up, down = "ArrowUp", "ArrowDown"
	}
	pages, flipped := true, false
	press := func(key string) (float64, error) {
		before := *st.Now
		if err := fm.p.pressIn(ctx, fr, key, 0); err != nil {
			return 0, err
		}
		// The widget may render the new value a frame or a task later.
		for j := 0; ; j++ {
			next, err := read()
			if err != nil {
				return 0, err
			}
			if next.Now == nil {
				return 0, nil
			}
			st = next
			if !same(*st.Now, before) || j == len(formBackoff) {
				return *st.Now - before, nil
			}
			if err := fm.p.pause(ctx, formBackoff, j+1); err != nil {
				return 0, err
			}
		}
	}
	for i := 0; i < maxSliderKeys && st.Now != nil && !same(*st.Now, want); i++ {
		diff := want - *st.Now
		switch {
		case i == 0 && (same(want, st.Min) || same(want, st.Max)):
			key := "Home"
			if same(want, st.Max) {
				key = "End"
			}
			if _, err := press(key); err != nil {
				return st, err
			}
			continue
		case pages:
			key := "PageUp"
			if diff < 0 {
				key = "PageDown"
			}
			d, err := press(key)
			if err != nil {
				return st, err
			}
			// A page key that does nothing, or passes the value, is
			// given up for arrows (the arrows go back when it passed).
			if d == 0 || (d > 0) != (diff > 0) || math.Abs(d) > math.Abs(diff) {
				pages = false
			}
			continue
		}
		key := up
		if diff < 0 {
			key = down
		}
		d, err := press(key)
		if err != nil {
			return st, err
		}
		switch {
		case d == 0:
			return st, nil // it does not move (a bound, or keys it ignores)
		case (d > 0) != (diff > 0):
			// A right-to-left slider: its arrows are the other way round.
			if flipped {
				return st, nil
			}
			flipped = true
			up, down = down, up
		case math.Abs(d) > math.Abs(diff) && !same(math.Abs(d), math.Abs(diff)):
			return st, nil // its step passes over the value
		}
	}
	return st, nil
}

// same compares slider values, which arrive as decimal text.
func same(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// sliderShown is the value a slider holds, as its number.
func sliderShown(st sliderState) string {
	if st.Now == nil {
		return st.Text
	}
	return num(*st.Now)
}

// keysReady waits until the element ref names is ready as a click target
// is (shown, still, uncovered), though only keys are sent to it, and
// brings the host's focus to the tab: the first step of setting a slider
// or a segmented field by its keys.
func (fm *forms) keysReady(ctx context.Context, ref, desc string, opts FormOptions) error {
	if _, err := fm.clickReady(ctx, Locator{Ref: ref}, need{Act: "click"}, func(*ready) (bool, error) { return false, nil }); err != nil {
		return named(err, desc)
	}
	return hostFocus(ctx, opts)
}
