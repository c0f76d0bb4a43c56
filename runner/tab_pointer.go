package runner

import (
	"context"
	"errors"
	"math"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/rpc/capnweb"
)

// The pointer and keyboard verbs (forms) and the bulk readers (tab):
// each through the form actions' or the readers' path, so the run's gate,
// the trace, the action log and sites= hold for them as for click and
// text.

// modifiersOf is the cdp form of a list of held keys.
func modifiersOf(names []string) (cdp.Modifier, error) {
	var mods cdp.Modifier
	for _, m := range names {
		switch m {
		case "Alt":
			mods |= cdp.Alt
		case "Control", "Ctrl":
			mods |= cdp.Ctrl
		case "Meta":
			mods |= cdp.Meta
		case "Shift":
			mods |= cdp.Shift
		default:
			return 0, codeErr(errcode.Invalid, capnweb.NameTypeError, "unknown modifier %v: use Alt, Control, Meta or Shift", m)
		}
	}
	return mods, nil
}

// pointer is the cdp form of the options hover, dblclick and click share.
func (o hoverOptions) pointer(api string) (cdp.ClickOptions, error) {
	mods, err := modifiersOf(o.Modifiers)
	if err != nil {
		return cdp.ClickOptions{}, err
	}
	co := cdp.ClickOptions{Modifiers: mods}
	if p := o.Position; p != nil {
		if !finite(p.X) || !finite(p.Y) {
			return cdp.ClickOptions{}, codeErr(errcode.Invalid, capnweb.NameRangeError, "%s: position must be finite numbers", api)
		}
		co.Position = &cdp.Point{X: p.X, Y: p.Y}
	}
	return co, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// pointerAct runs one pointer action on target: the options checked
// (bad), then f with the cdp options (the form options filled in).
func (a *formsAPI) pointerAct(ctx context.Context, mid methodID, id string, tg cdp.Locator, o formOptions, co cdp.ClickOptions, bad error, f func(*cdp.Tab, context.Context, cdp.Locator, cdp.ClickOptions) error) error {
	_, err := act(ctx, a, mid, id, tg, o, bad, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (none, error) {
		co.FormOptions = fo
		return none{}, f(c.tab, c.ctx, tg, co)
	})
	return err
}

// Click clicks target: with opts.button, opts.clickCount, opts.modifiers
// and opts.position as given, else one left click at its centre.
func (a *formsAPI) Click(ctx context.Context, id string, target cdp.Locator, opts clickOptions) error {
	co, err := opts.pointer("tab.click")
	co.Button, co.ClickCount = opts.Button, opts.ClickCount
	return a.pointerAct(ctx, mFormsClick, id, target, opts.formOptions, co, err, (*cdp.Tab).ClickWith)
}

func (a *formsAPI) Dblclick(ctx context.Context, id string, target cdp.Locator, opts dblclickOptions) error {
	co, err := opts.pointer("tab.dblclick")
	co.Button = opts.Button
	return a.pointerAct(ctx, mFormsDblclick, id, target, opts.formOptions, co, err, (*cdp.Tab).DblClick)
}

func (a *formsAPI) Hover(ctx context.Context, id string, target cdp.Locator, opts hoverOptions) error {
	co, err := opts.pointer("tab.hover")
	return a.pointerAct(ctx, mFormsHover, id, target, opts.formOptions, co, err, (*cdp.Tab).Hover)
}

// DragTo drags source onto target; both wait as a hover's target does,
// within the one timeout.
func (a *formsAPI) DragTo(ctx context.Context, id string, source, target cdp.Locator, opts formOptions) error {
	_, err := act(ctx, a, mFormsDragTo, id, source, opts, checkTarget("tab.dragTo", target), func(c *call, src cdp.Locator, fo cdp.FormOptions) (none, error) {
		return none{}, c.tab.DragTo(c.ctx, src, target, fo)
	})
	return err
}

func (a *formsAPI) Focus(ctx context.Context, id string, target cdp.Locator, opts formOptions) error {
	_, err := act(ctx, a, mFormsFocus, id, target, opts, nil, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (none, error) {
		return none{}, c.tab.Focus(c.ctx, tg, fo)
	})
	return err
}

// Type types text key by key into target (focused first), opts.delay
// milliseconds apart. Text past cdp.MaxTypeKeys characters is
// limit_exceeded before anything is typed.
func (a *formsAPI) Type(ctx context.Context, id string, target cdp.Locator, text string, opts typeOptions) error {
	const api = "tab.type"
	var bad error
	if !finite(opts.Delay) || opts.Delay < 0 || opts.Delay > float64(maxTypeDelay/time.Millisecond) {
		bad = codeErr(errcode.Invalid, capnweb.NameRangeError, "%s: delay must be from 0 to %d milliseconds", api, maxTypeDelay/time.Millisecond)
	} else if n := utf8.RuneCountInString(text); n > cdp.MaxTypeKeys {
		bad = limitErr(cdp.MaxTypeKeys, "%s: %d characters is more than the %d typed keys one call may press; fill a field in one go", api, n, cdp.MaxTypeKeys)
	}
	delay := time.Duration(opts.Delay * float64(time.Millisecond))
	_, err := act(ctx, a, mFormsType, id, target, opts.formOptions, bad, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (none, error) {
		return none{}, c.tab.Type(c.ctx, tg, text, cdp.TypeOptions{FormOptions: fo, Delay: delay})
	})
	return err
}

// maxTypeDelay bounds tab.type's delay between keys: a person types
// several keys a second, and the call's timeout bounds the whole anyway.
const maxTypeDelay = 10 * time.Second

// Texts answers at once, as Count does: every match's text.
func (a *tabAPI) Texts(ctx context.Context, id string, target cdp.Locator) ([]string, error) {
	out, err := read(ctx, a.r, mTabTexts, id, target, 0, nil, bulk((*cdp.Tab).Texts))
	return orEmpty(out), err
}

// Values answers at once, as Count does: every match's value.
func (a *tabAPI) Values(ctx context.Context, id string, target cdp.Locator) ([]string, error) {
	out, err := read(ctx, a.r, mTabValues, id, target, 0, nil, bulk((*cdp.Tab).Values))
	return orEmpty(out), err
}

// Table waits for its target as Text does.
func (a *tabAPI) Table(ctx context.Context, id string, target cdp.Locator, opts readOptions) (cdp.Table, error) {
	return read(ctx, a.r, mTabTable, id, target, opts.Timeout, nil, bulk((*cdp.Tab).Table))
}

// bulk is reader f, its error worded by bulkErr.
func bulk[T any](f func(*cdp.Tab, context.Context, cdp.Locator) (T, error)) func(*cdp.Tab, context.Context, cdp.Locator) (T, error) {
	return func(t *cdp.Tab, ctx context.Context, tg cdp.Locator) (T, error) {
		v, err := f(t, ctx, tg)
		return v, bulkErr(err)
	}
}

// bulkErr gives a bulk read past its bound the limit it met, as every
// limit_exceeded carries it.
func bulkErr(err error) error {
	var le *cdp.LocatorError
	if !errors.As(err, &le) || le.Code != errcode.LimitExceeded {
		return err // the memory budget's own refusal names memory
	}
	return limitErr(cdp.MaxReadCells, "%s", le.Message)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
