package cdp

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/input"

	"github.com/tranquil/automation/errcode"
)

// errUnknownKey reports a key name Press does not know. Its code is
// invalid.
var errUnknownKey = codeErr(errcode.Invalid, "unknown key")

// Modifier is a set of held modifier keys for Press and Click.
type Modifier int

// Modifier keys, combinable with |.
const (
	Alt   Modifier = 1
	Ctrl  Modifier = 2
	Meta  Modifier = 4
	Shift Modifier = 8
)

type keyDef struct {
	code string
	vk   int
	text string
}

// keys are the named keys Press understands, by their DOM key names.
var keys = map[string]keyDef{
	"Enter":      {"Enter", 13, "\r"},
	"Tab":        {"Tab", 9, ""},
	"Escape":     {"Escape", 27, ""},
	"Backspace":  {"Backspace", 8, ""},
	"Delete":     {"Delete", 46, ""},
	"ArrowUp":    {"ArrowUp", 38, ""},
	"ArrowDown":  {"ArrowDown", 40, ""},
	"ArrowLeft":  {"ArrowLeft", 37, ""},
	"ArrowRight": {"ArrowRight", 39, ""},
	"Home":       {"Home", 36, ""},
	"End":        {"End", 35, ""},
	"PageUp":     {"PageUp", 33, ""},
	"PageDown":   {"PageDown", 34, ""},
	" ":          {"Space", 32, " "},
	"Space":      {"Space", 32, " "},
}

// keyOf describes key: a name from the table above, or one printable
// character.
func keyOf(key string) (name string, d keyDef, err error) {
	if d, ok := keys[key]; ok {
		if key == "Space" {
			key = " "
		}
		return key, d, nil
	}
	if utf8.RuneCountInString(key) != 1 {
		return "", keyDef{}, codeErr(errcode.Invalid, "%w %q", errUnknownKey, key)
	}
	r, _ := utf8.DecodeRuneInString(key)
	d = keyDef{text: key}
	switch {
	case r >= 'a' && r <= 'z':
		d.code, d.vk = "Key"+strings.ToUpper(key), int(r-'a'+'A')
	case r >= 'A' && r <= 'Z':
		d.code, d.vk = "Key"+key, int(r)
	case r >= '0' && r <= '9':
		d.code, d.vk = "Digit"+key, int(r)
	}
	return key, d, nil
}

// Press sends a trusted key press (down, then up) to the focused element,
// with mods held. key is a DOM key name ("Enter", "Tab", "Escape",
// "ArrowDown", …) or a single character. With Ctrl, Alt or Meta held no
// text is typed, as on a real keyboard.
//
// Like every input method it first checks the tab's main document against
// the tab's sites (see [TabOptions]); it is not logged on its own. For a
// logged press that honours dry runs, see [Tab.PressKey].
func (t *Tab) Press(ctx context.Context, key string, mods Modifier) error {
	return t.pressIn(ctx, "", key, mods)
}

// pressIn is Press for a key meant for an element in frame fr, whose
// document is the one checked.
func (t *Tab) pressIn(ctx context.Context, fr, key string, mods Modifier) error {
	name, d, err := keyOf(key)
	if err != nil {
		return err
	}
	if err := t.checkFrame(ctx, fr); err != nil {
		return err
	}
	text := d.text
	if mods&(Ctrl|Alt|Meta) != 0 {
		text = ""
	}
	typ := "keyDown"
	if text == "" {
		typ = "rawKeyDown" // a key that types nothing
	}
	down := input.NewDispatchKeyEventArgs(typ).SetKey(name).SetModifiers(int(mods))
	up := input.NewDispatchKeyEventArgs("keyUp").SetKey(name).SetModifiers(int(mods))
	if d.code != "" {
		down.SetCode(d.code)
		up.SetCode(d.code)
	}
	if d.vk != 0 {
		down.SetWindowsVirtualKeyCode(d.vk).SetNativeVirtualKeyCode(d.vk)
		up.SetWindowsVirtualKeyCode(d.vk).SetNativeVirtualKeyCode(d.vk)
	}
	if text != "" {
		down.SetText(text).SetUnmodifiedText(text)
	}
	if err := t.c.Input.DispatchKeyEvent(ctx, down); err != nil {
		return t.fail(err)
	}
	if err := t.c.Input.DispatchKeyEvent(ctx, up); err != nil {
		return t.fail(err)
	}
	return nil
}

// InsertText types text into the focused element as one trusted input
// event, the way an input method commits text.
func (t *Tab) InsertText(ctx context.Context, text string) error {
	return t.insertTextIn(ctx, "", text)
}

// insertTextIn is InsertText for a field in frame fr, whose document is
// the one checked; keys go to the frame with focus, which the form
// runtime gave to that field.
func (t *Tab) insertTextIn(ctx context.Context, fr, text string) error {
	if err := t.checkFrame(ctx, fr); err != nil {
		return err
	}
	if err := t.c.Input.InsertText(ctx, input.NewInsertTextArgs(text)); err != nil {
		return t.fail(err)
	}
	return nil
}

// Click sends a trusted left click at (x, y), in CSS pixels from the
// viewport's top left: a move, a press and a release.
func (t *Tab) Click(ctx context.Context, x, y float64) error {
	return t.clickIn(ctx, "", x, y)
}

// clickIn clicks at (x, y) in the page's viewport (see pagePoint) on an
// element of frame fr, whose document is checked against the tab's sites;
// the browser routes the click down to the frame.
func (t *Tab) clickIn(ctx context.Context, fr string, x, y float64) error {
	return t.clickAt(ctx, fr, x, y, input.MouseButtonLeft, 1, 1, 0)
}

// PressKey presses key on whatever has focus, as a page action: refused
// when the document is not allowed, logged (without the key, which may be
// part of what is being typed), and with opts.DryRun checked but not sent.
func (t *Tab) PressKey(ctx context.Context, key string, mods Modifier, opts FormOptions) error {
	if _, _, err := keyOf(key); err != nil {
		return err
	}
	return t.act(ctx, "press", "", opts.DryRun, func(ctx context.Context) error {
		if err := t.checkDocument(ctx); err != nil {
			return err
		}
		// Keys go to the focused frame, which may be another site's.
		if err := t.focusInFrame(ctx, "", "press"); err != nil {
			return err
		}
		if opts.DryRun {
			return nil
		}
		return t.Press(ctx, key, mods)
	})
}

// focusedFrameFn reports whether keyboard focus is inside a frame, through
// shadow roots.
const focusedFrameFn = `() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return !!a && /^(IFRAME|FRAME|OBJECT|EMBED)$/.test(a.tagName);
}`
