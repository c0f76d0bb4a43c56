package cdp

import (
	"context"
	"errors"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Waiting until a target is ready for an action: the retries, backoff
// and checks every form action shares.

// DefaultFormWait bounds how long a form action waits for its target when
// ctx has no deadline of its own; the runner gives every call one (30 s
// unless the script passes a timeout).
const DefaultFormWait = 30 * time.Second

// formBackoff are the pauses between checks of a target that is not ready:
// quick at first, then easing off. Each check itself waits for an
// animation frame where stability needs one.
var formBackoff = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// waitable reports whether a target can grow out of err by waiting: it
// may appear, show, be enabled or editable, stop moving, be uncovered, or
// get the option asked for. A ref that went stale stays stale, but the
// fresh ref a lookup made for this very check may fall to a re-render.
func waitable(err error, byRef bool) bool {
	var te *LocatorError
	if !errors.As(err, &te) {
		return false
	}
	switch te.Code {
	case errcode.NotFound, errcode.Hidden, errcode.Disabled, errcode.Readonly, errcode.Obscured, errcode.NotStable, errcode.NoOption, errcode.MissingPart:
		return true
	case errcode.StaleRef:
		return !byRef
	}
	return false
}

// until runs f until it succeeds, fails in a way waiting cannot mend, or
// ctx ends; then the last reason f gave is the error, with the time
// waited. It does not match ErrTimeout: the reason (not_found, obscured,
// …) is what the caller branches on.
func (fm *forms) until(ctx context.Context, byRef bool, f func(ctx context.Context) error) error {
	return fm.untilWith(ctx, DefaultFormWait, func(err error) bool { return waitable(err, byRef) }, f)
}

// untilWith is until with its own rule of what waiting can mend, and its
// own bound for a ctx without a deadline.
func (fm *forms) untilWith(ctx context.Context, bound time.Duration, mendable func(error) bool, f func(ctx context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, bound)
		defer cancel()
	}
	start := time.Now()
	var last, reason error
	for i := 0; ; i++ {
		last = f(ctx)
		if last == nil {
			return nil
		}
		if mendable(last) {
			reason = last
		} else if ctx.Err() == nil {
			return last
		}
		if ctx.Err() != nil {
			break
		}
		if err := fm.p.pause(ctx, formBackoff, i); err != nil {
			if ctx.Err() == nil {
				return err // the tab's session ended
			}
			break
		}
	}
	var te *LocatorError
	if !errors.As(reason, &te) {
		return last
	}
	return editTarget(reason, func(*LocatorError) bool { return true }, func(te *LocatorError) { te.Waited = waitedSince(ctx, start) })
}

// need tells the runtime's actionable which action a target must be ready
// for (see forms.js).
type need struct {
	Act      string            `json:"act"`
	Value    *string           `json:"value,omitempty"`
	Checked  *bool             `json:"checked,omitempty"`
	Options  []string          `json:"options"`
	Multiple bool              `json:"multiple,omitempty"`
	Parts    map[string]string `json:"parts,omitempty"`
	Dry      bool              `json:"dry,omitempty"`
	// Guard arms the check of where a click lands or a hover comes to
	// rest (see clickLanded and hoverLanded).
	Guard bool `json:"guard,omitempty"`
	// Position is the point of the element to act at, from its top left
	// corner; nil is the centre of its visible part.
	Position *Point `json:"position,omitempty"`
}

// ready is a target found ready for an action, and where to click it.
type ready struct {
	Element
	X, Y      float64
	Checked   bool     `json:"checked"`
	Mode      string   `json:"mode"`  // fill: "type" or "set"; select: "native", "datalist", "combobox", "listbox" or "parts"
	Want      string   `json:"want"`  // fill "set": the value as the input reads it; select "datalist": what to type
	Value     string   `json:"value"` // native select: the label shown after choosing
	Values    []string `json:"values"`
	Committed bool     `json:"committed"` // native select: the page kept the choice
	Expanded  bool     `json:"expanded"`  // a combobox already open
	Focused   bool     `json:"focused"`   // focus: the element took focus
	Closed    bool     `json:"closed"`    // a combobox or listbox that says it is collapsed
}

// otherFrames reports whether a target may be in some frame other than
// the main one, or the search passes over frames: then it is found first.
func (fm *forms) otherFrames() bool {
	frames, skipped := fm.p.searchFrames("")
	return len(frames) != 1 || frames[0] != "" || len(skipped) > 0
}

// waitReady waits until loc is ready for n. A {role, name} or {label}
// target, or one with a scope, filters or nth, is looked up on each try
// and then checked by its ref; other targets are found and checked in one
// call.
func (fm *forms) waitReady(ctx context.Context, loc Locator, n need) (*ready, error) {
	desc := loc.String()
	var r ready
	err := fm.until(ctx, loc.Ref != "", func(ctx context.Context) error {
		r = ready{}
		tg, fr := loc, ""
		switch {
		case loc.Ref != "":
			fr = fm.p.frameOfRef(loc.Ref)
		case axTarget(loc) || loc.composed() || loc.Frame != "" || fm.otherFrames():
			// Found first (in the tree, through its scope and filters, or
			// in whichever frame holds it), then checked by ref in its
			// frame.
			el, err := fm.Resolve(ctx, loc)
			if err != nil {
				return err
			}
			tg, fr = Locator{Ref: el.Ref}, el.frame
		}
		r.frame = fr
		if err := fm.formCallIn(ctx, fr, desc, &r, "actionable", tg, n); err != nil || fr == "" {
			return fm.inFrame(fr, err)
		}
		if n.Act == "fill" || r.Mode == "native" || r.Mode == "datalist" {
			return nil // nothing is clicked; keys go to the focused frame
		}
		// Clicks go to the page, so the point must be one the page shows.
		x, y, err := fm.p.pagePoint(ctx, fr, r.X, r.Y)
		if err != nil {
			return named(err, desc)
		}
		r.X, r.Y = x, y
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.frame != "" {
		r.Element.Element.Frame = fm.p.frameOrigin(r.frame)
	}
	return &r, nil
}
