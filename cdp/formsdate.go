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
// types them, in the field's own order; then each segment's
// aria-valuenow is read back.

// segment is one spinbutton of a segmented field, as segmentsOf reads it.
type segment struct {
	Part string   `json:"part"` // day, month, year, hour, minute, second, dayPeriod; "" when unknown
	Now  *float64 `json:"now"`
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
	Text string   `json:"text"`
}

type segmentedState struct {
	Segments          []segment `json:"segments"`
	Value             string    `json:"value"` // the field's form input, when it has one
	Invalid           bool      `json:"invalid"`
	ValidationMessage string    `json:"validationMessage"`
	ErrorText         string    `json:"errorText"`
}

// dateLayouts are the values a segmented field is filled from: ISO 8601,
// as a native date, time or datetime-local input takes them. What the
// field shows ("03/07/2024") is not taken: the same text is another date
// in another locale.
var dateLayouts = []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05", "15:04", "15:04:05"}

// fillSegments is Fill on a segmented field; ok is false when loc is not
// one (the caller tries its other ways). A value that is no ISO date or
// time, that names parts the field has not or lacks parts it has, or
// that a segment's bounds exclude, is errcode.Invalid before any key; a
// segment that holds another number afterwards (a field that refused
// or corrected the date) is a *NotCommittedError naming what the field
// holds.
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
	keys, wants, err := segmentKeys(st.Segments, value)
	if err != nil {
		return FieldState{}, true, &LocatorError{Code: errcode.Invalid, Target: desc, Message: err.Error()}
	}
	if opts.DryRun {
		return FieldState{}, true, nil
	}
	// Ready as a click target is (shown, still, uncovered), though only
	// keys are sent.
	if _, err := fm.clickReady(ctx, Locator{Ref: el.Ref}, need{Act: "click"}, func(*ready) (bool, error) { return false, nil }); err != nil {
		return FieldState{}, true, named(err, desc)
	}
	if err := hostFocus(ctx, opts); err != nil {
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
		if segmentsHold(st.Segments, wants) || j == len(formBackoff) {
			break
		}
		if err := fm.p.pause(ctx, formBackoff, j+1); err != nil {
			return FieldState{}, true, err
		}
	}
	shown := segmentsShown(st.Segments)
	if !segmentsHold(st.Segments, wants) {
		return FieldState{Value: shown}, true, &NotCommittedError{Target: desc, Kept: shown}
	}
	return FieldState{Value: shown, Invalid: st.Invalid, ValidationMessage: st.ValidationMessage, ErrorText: st.ErrorText}, true, nil
}

// segmentKeys turns value into the digits (or letter) typed into each
// segment and the number each must read afterwards.
func segmentKeys(segs []segment, value string) ([]string, []float64, error) {
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
	if has[""] || form == "" {
		return nil, nil, errors.New("the field has segments of no known part (day, month, year, hour, minute, second, AM/PM)")
	}
	valueDate, valueTime := strings.HasPrefix(layout, "2006"), strings.Contains(layout, "15")
	if layout == "" || valueDate != isDate || valueTime != isTime || (!has["second"] && at.Second() != 0) || (valueDate && at.Year() < 1) {
		return nil, nil, fmt.Errorf("the field takes %s", form)
	}
	keys := make([]string, len(segs))
	wants := make([]float64, len(segs))
	for i, s := range segs {
		n, width := 0, 2
		switch s.Part {
		case "day":
			n = at.Day()
		case "month":
			n = int(at.Month())
		case "year":
			n, width = at.Year(), 4
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
			keys[i], wants[i] = "A", 0
			if at.Hour() >= 12 {
				keys[i], wants[i] = "P", 1
			}
			continue
		}
		if (s.Min != nil && float64(n) < *s.Min) || (s.Max != nil && float64(n) > *s.Max) {
			return nil, nil, fmt.Errorf("the field's %s is from %s to %s", s.Part, bound(s.Min), bound(s.Max))
		}
		keys[i], wants[i] = fmt.Sprintf("%0*d", width, n), float64(n)
	}
	return keys, wants, nil
}

func bound(f *float64) string {
	if f == nil {
		return "?"
	}
	return num(*f)
}

// segmentsHold reports whether each segment reads its wanted number (an
// AM/PM segment wants 1 for PM).
func segmentsHold(segs []segment, wants []float64) bool {
	if len(segs) != len(wants) {
		return false
	}
	for i, s := range segs {
		if s.Part == "dayPeriod" {
			if pm(s) != (wants[i] == 1) {
				return false
			}
			continue
		}
		if s.Now == nil || !same(*s.Now, wants[i]) {
			return false
		}
	}
	return true
}

// pm tells an AM/PM segment's half of the day: by its number where it
// has one (0 for AM; React Aria counts 12 for PM), else by its text.
func pm(s segment) bool {
	if s.Now != nil {
		return *s.Now >= 1
	}
	return strings.HasPrefix(strings.ToLower(s.Text), "p")
}

// segmentsShown is what the field holds, in ISO order where each part
// has a number (2024-03-07, 14:05), else its segments' text as shown.
func segmentsShown(segs []segment) string {
	n := map[string]int{}
	half := -1 // a 12-hour clock's: 0 AM, 12 PM
	for _, s := range segs {
		if s.Part == "dayPeriod" {
			half = map[bool]int{false: 0, true: 12}[pm(s)]
			continue
		}
		if s.Now == nil {
			texts := make([]string, len(segs))
			for i, s := range segs {
				texts[i] = s.Text
			}
			return strings.Join(texts, " ")
		}
		n[s.Part] = int(*s.Now)
	}
	if h, ok := n["hour"]; ok && half >= 0 {
		n["hour"] = h%12 + half
	}
	var out []string
	if _, ok := n["year"]; ok {
		out = append(out, fmt.Sprintf("%04d-%02d-%02d", n["year"], n["month"], n["day"]))
	}
	if _, ok := n["hour"]; ok {
		t := fmt.Sprintf("%02d:%02d", n["hour"], n["minute"])
		if _, ok := n["second"]; ok {
			t += fmt.Sprintf(":%02d", n["second"])
		}
		out = append(out, t)
	}
	return strings.Join(out, "T")
}
