package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/input"

	"github.com/tranquil/automation/errcode"
)

// Pointer and keyboard verbs beyond the form runtime's click: hover,
// clicks with a button, count, modifiers or position, drag and drop,
// focus and typing key by key. Each is a page action (logged, held to the
// tab's sites, honouring dry runs) and waits for its target as
// [Tab.ClickElement] does. They drive the browser's input directly, so
// they live on the tab rather than behind the form runtime's core.

// MaxTypeKeys bounds the text [Tab.Type] types: each character is a key
// press, two protocol calls, so a long text is a long call; fill types
// any length at once.
const MaxTypeKeys = 10_000

// MaxClickCount bounds [ClickOptions.ClickCount]: a triple click selects
// a paragraph, and no widget counts further.
const MaxClickCount = 3

// Point is a point in CSS pixels.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// ClickOptions are how [Tab.ClickWith] clicks. The zero value is one left
// click at the centre of the element's visible part.
type ClickOptions struct {
	FormOptions
	// Button is "left" (also ""), "right" or "middle".
	Button string
	// ClickCount is how many clicks make the gesture, from 1 to
	// MaxClickCount (2 is a double click); 0 is 1.
	ClickCount int
	// Modifiers are held during the clicks.
	Modifiers Modifier
	// Position is where to click, from the element's top left corner;
	// nil is the centre of its visible part.
	Position *Point
}

// TypeOptions are how [Tab.Type] types.
type TypeOptions struct {
	FormOptions
	// Delay is the pause between key presses; 0 presses them at once.
	Delay time.Duration
}

// buttonOf is the protocol's button for a button's name, and the buttons
// mask while it is held.
func buttonOf(name string) (input.MouseButton, int, error) {
	switch name {
	case "", "left":
		return input.MouseButtonLeft, 1, nil
	case "right":
		return input.MouseButtonRight, 2, nil
	case "middle":
		return input.MouseButtonMiddle, 4, nil
	}
	return "", 0, codeErr(errcode.Invalid, "unknown button %q: use left, right or middle", name)
}

// ClickWith clicks the element loc names with o's button, count,
// modifiers and position: a trusted click, waited for and checked where
// it lands as [Tab.ClickElement]'s is. It is logged as "click".
func (t *Tab) ClickWith(ctx context.Context, loc Locator, o ClickOptions) error {
	return t.clickAs(ctx, "click", loc, o)
}

// DblClick double-clicks the element loc names, as ClickWith does with a
// ClickCount of 2: two presses and releases, the page seeing click,
// click and dblclick. It is logged as "dblclick".
func (t *Tab) DblClick(ctx context.Context, loc Locator, o ClickOptions) error {
	o.ClickCount = 2
	return t.clickAs(ctx, "dblclick", loc, o)
}

func (t *Tab) clickAs(ctx context.Context, method string, loc Locator, o ClickOptions) error {
	btn, mask, err := buttonOf(o.Button)
	if err != nil {
		return err
	}
	count := max(o.ClickCount, 1)
	if count > MaxClickCount {
		return codeErr(errcode.Invalid, "clickCount %d is more than %d", o.ClickCount, MaxClickCount)
	}
	return t.forms.action(ctx, method, loc, o.FormOptions, func(ctx context.Context) error {
		_, err := t.pointerReady(ctx, loc, need{Act: "click", Dry: o.DryRun, Position: o.Position}, func(ctx context.Context, el *ready) error {
			return t.clickAt(ctx, el.frame, el.X, el.Y, btn, mask, count, o.Modifiers)
		})
		return err
	})
}

// Hover moves the pointer over the element loc names (at o's position,
// else the centre of its visible part), once it is visible, still and
// not under another element: the page sees the pointer arrive
// (mouseover, mouseenter, :hover).
func (t *Tab) Hover(ctx context.Context, loc Locator, o ClickOptions) error {
	return t.forms.action(ctx, "hover", loc, o.FormOptions, func(ctx context.Context) error {
		_, err := t.pointerReady(ctx, loc, need{Act: "hover", Dry: o.DryRun, Position: o.Position}, func(ctx context.Context, el *ready) error {
			if err := t.checkFrame(ctx, el.frame); err != nil {
				return err
			}
			return t.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", el.X, el.Y).SetModifiers(int(o.Modifiers)))
		})
		return err
	})
}

// pointerReady waits until loc is ready for n and runs do on it, unless n
// is a dry run. A press (n.Act "click") is checked where it lands, as
// clickReady checks it: one the page moved something into is held back
// and the wait starts again. A hover is checked where the pointer came to
// rest, and tried again when that is not on the element.
func (t *Tab) pointerReady(ctx context.Context, loc Locator, n need, do func(ctx context.Context, el *ready) error) (*ready, error) {
	fm := t.forms
	n.Guard = !n.Dry && (n.Act == "click" || n.Act == "hover")
	var el *ready
	err := fm.until(ctx, loc.Ref != "", func(ctx context.Context) (err error) {
		if el, err = fm.waitReady(ctx, loc, n); err != nil || n.Dry {
			return err
		}
		if !n.Guard {
			return do(ctx, el)
		}
		if n.Act == "hover" {
			if err := do(ctx, el); err != nil {
				return err
			}
			return fm.formCallIn(ctx, el.frame, loc.String(), nil, "hoverLanded")
		}
		t.forgetRefusals(el.frame)
		if err := do(ctx, el); err != nil {
			return err
		}
		return t.clickNavigationRefused(el.frame, fm.formCallIn(ctx, el.frame, loc.String(), nil, "clickLanded"))
	})
	if err != nil {
		return nil, err
	}
	return el, nil
}

// mouse sends mouse events in order.
func (t *Tab) mouse(ctx context.Context, steps ...*input.DispatchMouseEventArgs) error {
	for _, s := range steps {
		if err := t.c.Input.DispatchMouseEvent(ctx, s); err != nil {
			return t.fail(err)
		}
	}
	return nil
}

// clickAt clicks count times at the page point (x, y) with button btn
// (held, the buttons mask), after checking frame fr's document.
func (t *Tab) clickAt(ctx context.Context, fr string, x, y float64, btn input.MouseButton, mask, count int, mods Modifier) error {
	if err := t.checkFrame(ctx, fr); err != nil {
		return err
	}
	m := int(mods)
	steps := []*input.DispatchMouseEventArgs{input.NewDispatchMouseEventArgs("mouseMoved", x, y).SetModifiers(m)}
	for i := 1; i <= count; i++ {
		steps = append(steps,
			input.NewDispatchMouseEventArgs("mousePressed", x, y).SetButton(btn).SetButtons(mask).SetClickCount(i).SetModifiers(m),
			input.NewDispatchMouseEventArgs("mouseReleased", x, y).SetButton(btn).SetButtons(0).SetClickCount(i).SetModifiers(m))
	}
	return t.mouse(ctx, steps...)
}

// Focus focuses the element loc names, as element.focus() does, once it
// is there, visible and enabled; one that cannot take focus is
// errcode.BadTarget. The host's Focus hook runs first, so keys typed next
// reach the page.
func (t *Tab) Focus(ctx context.Context, loc Locator, o FormOptions) error {
	return t.forms.action(ctx, "focus", loc, o, func(ctx context.Context) error {
		el, err := t.forms.waitReady(ctx, loc, need{Act: "focus", Dry: o.DryRun})
		if err != nil || o.DryRun {
			return err
		}
		if !el.Focused {
			return &LocatorError{Code: errcode.BadTarget, Target: loc.String(), Message: "the element cannot take focus", Candidates: []Candidate{el.Element.Element}}
		}
		return hostFocus(ctx, o)
	})
}

// hostFocus runs o's Focus hook, when it has one, before keys are sent:
// keys reach only a tab the host has focused.
func hostFocus(ctx context.Context, o FormOptions) error {
	if o.Focus == nil {
		return nil
	}
	if err := o.Focus(ctx); err != nil {
		return fmt.Errorf("cdp: focus the tab: %w", err)
	}
	return nil
}

// Type focuses the element loc names and types text into whatever then
// has focus, one trusted key press per character (a line break is Enter,
// a tab Tab), with o.Delay between them: for editors and widgets that
// listen to keys rather than take a value, where [Tab.Fill] sets a
// field's text in one go. An element that does not take focus itself
// (an editor's outer box) is clicked, as a person would, and keys go
// where the page put focus. Text longer than MaxTypeKeys characters is
// errcode.LimitExceeded. Nothing is read back: the page decides what the
// keys do.
func (t *Tab) Type(ctx context.Context, loc Locator, text string, o TypeOptions) error {
	if n := utf8.RuneCountInString(text); n > MaxTypeKeys {
		return codeErr(errcode.LimitExceeded, "%d characters is more than the %d typed keys one call may press; fill a field in one go", n, MaxTypeKeys)
	}
	if o.Delay < 0 {
		return codeErr(errcode.Invalid, "the delay between keys is negative")
	}
	return t.forms.action(ctx, "type", loc, o.FormOptions, func(ctx context.Context) error {
		el, err := t.forms.waitReady(ctx, loc, need{Act: "focus", Dry: o.DryRun})
		if err != nil || o.DryRun {
			return err
		}
		if !el.Focused {
			if err := t.clickIn(ctx, el.frame, el.X, el.Y); err != nil {
				return err
			}
		}
		if err := hostFocus(ctx, o.FormOptions); err != nil {
			return err
		}
		return t.typeText(ctx, el.frame, text, o.Delay)
	})
}

// focusInFrame refuses method's keys when, with sites set, keyboard focus
// in frame fr's document is inside a frame of its own, whose site the keys
// would reach unchecked.
func (t *Tab) focusInFrame(ctx context.Context, fr, method string) error {
	if t.opts.Sites == nil {
		return nil
	}
	raw, err := t.callIn(ctx, fr, sdkWorld, focusedFrameFn, nil, false)
	if err != nil {
		return err
	}
	if string(raw) == "true" {
		return &SiteError{Method: method, Site: "(a frame)", Sites: t.opts.Sites}
	}
	return nil
}

// typeText presses a key for each character of text, into frame fr. With
// sites set, where focus is is checked before each key: a page may move
// it into another site's frame as the keys arrive.
func (t *Tab) typeText(ctx context.Context, fr, text string, delay time.Duration) error {
	first := true
	for _, r := range text {
		key := string(r)
		switch r {
		case '\n', '\r':
			key = "Enter"
		case '\t':
			key = "Tab"
		}
		if !first && delay > 0 {
			tm := time.NewTimer(delay)
			select {
			case <-tm.C:
			case <-ctx.Done():
				tm.Stop()
				return ctx.Err()
			}
		}
		first = false
		if err := t.focusInFrame(ctx, fr, "type"); err != nil {
			return err
		}
		if err := t.pressIn(ctx, fr, key, 0); err != nil {
			return err
		}
	}
	return nil
}

// DragTo drags the element src names onto the element dst names with the
// pointer: it waits until both are ready as for a hover, then presses on
// src, moves to dst in a few steps and releases there. A drag the page
// starts with HTML drag and drop (draggable elements) is carried through
// the browser's own drag events (dragenter, dragover, drop), as a
// person's would be; one the page builds from pointer events sees those.
// It is logged as "dragTo" with src as its target.
func (t *Tab) DragTo(ctx context.Context, src, dst Locator, o FormOptions) error {
	if err := dst.validate(); err != nil {
		return err
	}
	return t.forms.action(ctx, "dragTo", src, o, func(ctx context.Context) error {
		from, err := t.forms.waitReady(ctx, src, need{Act: "hover", Dry: o.DryRun})
		if err != nil {
			return err
		}
		to, err := t.forms.waitReady(ctx, dst, need{Act: "hover", Dry: o.DryRun})
		if err != nil || o.DryRun {
			return err
		}
		if err := t.checkFrame(ctx, from.frame); err != nil {
			return err
		}
		if err := t.checkFrame(ctx, to.frame); err != nil {
			return err
		}
		return t.drag(ctx, Point{from.X, from.Y}, Point{to.X, to.Y})
	})
}

// dragSteps is how many moves carry a drag from its source to its target:
// libraries that track the pointer (sortable lists) see it pass over what
// lies between, and the first move starts the drag.
const dragSteps = 5

// drag presses at from, moves to to and releases there. The browser's
// drags are intercepted for the while: an HTML drag the page starts comes
// back as Input.dragIntercepted, and is then played to the page as drag
// events at to.
func (t *Tab) drag(ctx context.Context, from, to Point) error {
	data := make(chan input.DragData, 1)
	stop := t.subscribe(func(method string, params json.RawMessage) {
		if method != "Input.dragIntercepted" {
			return
		}
		var ev input.DragInterceptedReply
		if json.Unmarshal(params, &ev) == nil {
			select {
			case data <- ev.Data:
			default:
			}
		}
	})
	defer stop()
	if err := t.c.Input.SetInterceptDrags(ctx, input.NewSetInterceptDragsArgs(true)); err != nil {
		return t.fail(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = t.c.Input.SetInterceptDrags(cctx, input.NewSetInterceptDragsArgs(false))
	}()
	moved := func(p Point) *input.DispatchMouseEventArgs {
		return input.NewDispatchMouseEventArgs("mouseMoved", p.X, p.Y).SetButton(input.MouseButtonLeft).SetButtons(1)
	}
	steps := []*input.DispatchMouseEventArgs{
		input.NewDispatchMouseEventArgs("mouseMoved", from.X, from.Y),
		input.NewDispatchMouseEventArgs("mousePressed", from.X, from.Y).SetButton(input.MouseButtonLeft).SetButtons(1).SetClickCount(1),
	}
	for i := 1; i <= dragSteps; i++ {
		f := float64(i) / dragSteps
		steps = append(steps, moved(Point{from.X + (to.X-from.X)*f, from.Y + (to.Y-from.Y)*f}))
	}
	// One more move at the target gives an intercepted drag that started
	// on the last step time to be reported before the release.
	steps = append(steps, moved(to))
	for _, s := range steps {
		if err := t.mouse(ctx, s); err != nil {
			return err
		}
		select {
		case d := <-data:
			return t.dropAt(ctx, to, d)
		default:
		}
	}
	return t.mouse(ctx, input.NewDispatchMouseEventArgs("mouseReleased", to.X, to.Y).SetButton(input.MouseButtonLeft).SetButtons(0).SetClickCount(1))
}

// dropAt plays an intercepted HTML drag to the page at p: the drag enters
// and passes over what is there, and drops. The browser's own drag ends
// with the drop; no release follows, as none reaches a page after a drop.
func (t *Tab) dropAt(ctx context.Context, p Point, d input.DragData) error {
	for _, typ := range []string{"dragEnter", "dragOver", "drop"} {
		if err := t.c.Input.DispatchDragEvent(ctx, input.NewDispatchDragEventArgs(typ, p.X, p.Y, d)); err != nil {
			return t.fail(err)
		}
	}
	return nil
}
