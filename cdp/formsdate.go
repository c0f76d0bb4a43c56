package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Filling a segmented date or time field (React Aria's DateField, MUI X's
// accessible field DOM): a labelled group of spinbuttons, one per part,
// in the order the field's locale gives them. It takes no text as a
// whole, so each segment is focused and its digits typed, as a person
// types them, in the field's own order; then the segments'
// aria-valuenow are read back, composed into ISO in the page.

// segment is one spinbutton of a segmented field, as segmentsOf reads it.
type segment struct {
	Part string   `json:"part"` // day, month, year, hour, minute, second, dayPeriod; "" when unknown
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
}

type segmentedState struct {
	Segments          []segment `json:"segments"`
	Value             string    `json:"value"` // in ISO order (see segmentedValue in segments.js)
	Invalid           bool      `json:"invalid"`
	ValidationMessage string    `json:"validationMessage"`
	ErrorText         string    `json:"errorText"`
}

// dateLayouts are the values a segmented field is filled from: ISO 8601,
// as a native date, time, datetime-local or month input takes them. What
// the field shows ("03/07/2024", "03/27") is not taken: the same text is
// another date in another locale.
var dateLayouts = []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05", "15:04", "15:04:05", monthLayout}

// monthLayout is a month of a year ("2027-03"): what a field of only a
// month and a year (a card's expiry) takes and holds.
const monthLayout = "2006-01"

// twoDigitYears is how far from this year a year typed as two digits
// (an "MM/YY" field) may be: fullYear reads the digits back as the year
// that ends in them within that many years of this one.
const twoDigitYears = 50

// fullYear is the year a two-digit year yy stands for, now being the
// current year: the one ending in yy from now-twoDigitYears on. The page
// reads the digits the same way (segmentedValue in segments.js).
func fullYear(yy, now int) int {
	lo := now - twoDigitYears
	return lo + ((yy-lo)%100+100)%100
}

// fillSegments is Fill on a segmented field; ok is false when loc is not
// one (the caller tries its other ways). A value that is no ISO date or
// time, that names parts the field has not or lacks parts it has, or
// that a segment's bounds exclude, is errcode.Invalid before any key; a
// read-only field is errcode.Readonly. A field that then holds another
// value (it refused or corrected the date) is a *NotCommittedError
// naming what it holds.
func (fm *forms) fillSegments(ctx context.Context, loc Locator, value string, opts FormOptions) (FieldState, bool, error) {
	desc := loc.String()
	el, err := fm.Resolve(ctx, loc)
	if err != nil {
		return FieldState{}, false, nil
	}
	read := func(focus int, leave bool) (segmentedState, error) {
		var st segmentedState
		err := fm.formCallIn(ctx, el.frame, desc, &st, "segmentsOf", el.Ref, focus, leave)
		return st, err
	}
	st, err := read(-1, false)
	if errors.Is(err, errcode.NotEditable) {
		return FieldState{}, false, nil
	}
	if err != nil {
		return FieldState{}, true, err
	}
	keys, want, err := segmentKeys(st.Segments, value)
	if err != nil {
		return FieldState{}, true, &LocatorError{Code: errcode.Invalid, Target: desc, Message: err.Error()}
	}
	if opts.DryRun {
		return FieldState{}, true, nil
	}
	if err := fm.keysReady(ctx, el.Ref, desc, opts); err != nil {
		return FieldState{}, true, err
	}
	for i, k := range keys {
		if _, err := read(i, false); err != nil {
			return FieldState{}, true, err
		}
		for _, r := range k {
			if err := fm.p.pressIn(ctx, el.frame, string(r), 0); err != nil {
				return FieldState{}, true, err
			}
		}
	}
	// The field commits when focus leaves it, and may render a frame or
	// a task later.
	for j := 0; ; j++ {
		if st, err = read(-1, j == 0); err != nil {
			return FieldState{}, true, err
		}
		if st.Value == want || j == len(formBackoff) {
			break
		}
		if err := fm.p.pause(ctx, formBackoff, j+1); err != nil {
			return FieldState{}, true, err
		}
	}
	if st.Value != want {
		return FieldState{Value: st.Value}, true, &NotCommittedError{Target: desc, Kept: st.Value}
	}
	return FieldState{Value: st.Value, Invalid: st.Invalid, ValidationMessage: st.ValidationMessage, ErrorText: st.ErrorText}, true, nil
}

// segmentKeys turns value into the digits (or letter) typed into each
// segment, and the value the field must then hold, as segmentedValue
// reads it.
func segmentKeys(segs []segment, value string) ([]string, string, error) {
	v := strings.TrimSpace(value)
	var at time.Time
	layout := ""
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			at, layout = t, l
			break
		}
	}
	has := map[string]bool{}
	for _, s := range segs {
		has[s.Part] = true
	}
	isDate, isTime := has["day"] || has["month"] || has["year"], has["hour"] || has["minute"]
	form := map[[2]bool]string{{true, false}: "a date (YYYY-MM-DD)", {false, true}: "a time (HH:MM)", {true, true}: "a date and time (YYYY-MM-DDTHH:MM)"}[[2]bool{isDate, isTime}]
	isMonth := has["month"] && has["year"] && !has["day"] && !isTime
	if isMonth {
		form = "a month (YYYY-MM)"
	}
	if has[""] || form == "" {
		return nil, "", errors.New("the field has segments of no known part (day, month, year, hour, minute, second, AM/PM)")
	}
	valueDate, valueTime := strings.HasPrefix(layout, "2006"), strings.Contains(layout, "15")
	if layout == "" || valueDate != isDate || valueTime != isTime || (layout == monthLayout) != isMonth ||
		(!has["second"] && at.Second() != 0) || (valueDate && at.Year() < 1) {
		return nil, "", fmt.Errorf("the field takes %s", form)
	}
	keys := make([]string, len(segs))
	for i, s := range segs {
		n, width := 0, 2
		switch s.Part {
		case "day":
			n = at.Day()
		case "month":
			n = int(at.Month())
		case "year":
			n, width = at.Year(), 4
			if s.Max != nil && *s.Max < 100 {
				// Two digits of the year, read back as the year near this
				// one that ends in them: a year they would not read back
				// as is not theirs to hold.
				now := time.Now().Year()
				if fullYear(n%100, now) != n {
					return nil, "", fmt.Errorf("the field holds a year as two digits: from %d to %d", now-twoDigitYears, now+100-twoDigitYears-1)
				}
				n, width = n%100, 2
			}
		case "hour":
			n = at.Hour()
			if has["dayPeriod"] { // a 12-hour clock
				n = (n+11)%12 + 1
			}
		case "minute":
			n = at.Minute()
		case "second":
			n = at.Second()
		case "dayPeriod":
			keys[i] = map[bool]string{false: "A", true: "P"}[at.Hour() >= 12]
			continue
		}
		if (s.Min != nil && float64(n) < *s.Min) || (s.Max != nil && float64(n) > *s.Max) {
			return nil, "", fmt.Errorf("the field's %s is from %s to %s", s.Part, bound(s.Min), bound(s.Max))
		}
		keys[i] = fmt.Sprintf("%0*d", width, n)
	}
	var want []string
	switch {
	case isMonth:
		want = append(want, at.Format(monthLayout))
	case has["year"]:
		want = append(want, at.Format("2006-01-02"))
	}
	if has["hour"] {
		l := "15:04"
		if has["second"] {
			l += ":05"
		}
		want = append(want, at.Format(l))
	}
	return keys, strings.Join(want, "T"), nil
}

func bound(f *float64) string {
	if f == nil {
		return "?"
	}
	return num(*f)
}
