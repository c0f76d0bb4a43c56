package runner

import (
	"context"
	"errors"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// The data plane of a run's tabs: tab, pageJs and forms, each call on one
// tab the run resolved, through cdp's page-action path.

// tabAPI is tab: the data plane of one resolved tab.
type tabAPI struct{ r *Run }

func (a *tabAPI) URL(ctx context.Context, id string) (string, error) {
	return invoke(ctx, a.r, mTabURL, callReq{tab: id}, func(c *call) (string, error) {
		u, err := c.tab.URL(c.ctx)
		if info, shown := a.r.hideLocal(TabInfo{URL: u}); !shown {
			u = info.URL // a local address the run may not reach is not told
		}
		return u, err
	})
}

func (a *tabAPI) Title(ctx context.Context, id string) (string, error) {
	return invoke(ctx, a.r, mTabTitle, callReq{tab: id}, func(c *call) (string, error) {
		return c.tab.Title(c.ctx)
	})
}

// navigation is a navigation's call: its options checked, then move
// under the call, told when the navigation counts as done.
func navigation[T any](ctx context.Context, r *Run, mid methodID, id string, o navigationOptions, move func(c *call, until cdp.WaitUntil) (T, error)) (T, error) {
	until, bad := o.waitUntil()
	return invoke(ctx, r, mid, callReq{tab: id, timeout: o.Timeout, refused: bad}, func(c *call) (T, error) {
		return move(c, until)
	})
}

// Goto loads rawURL and returns the document's response: {status, url},
// status 0 when there was none (about:blank, a #fragment).
func (a *tabAPI) Goto(ctx context.Context, id, rawURL string, opts navigationOptions) (cdp.Response, error) {
	return navigation(ctx, a.r, mTabGoto, id, opts, func(c *call, until cdp.WaitUntil) (cdp.Response, error) {
		resp, err := c.tab.Goto(c.ctx, rawURL, until)
		if err != nil {
			return cdp.Response{}, err
		}
		return *resp, nil
	})
}

func (a *tabAPI) WaitForNavigation(ctx context.Context, id string, opts navigationOptions) error {
	_, err := navigation(ctx, a.r, mTabWaitForNavigation, id, opts, func(c *call, until cdp.WaitUntil) (none, error) {
		err := c.tab.WaitNavigated(c.ctx, until)
		if errors.Is(err, cdp.ErrTimeout) {
			err = codeErr(errcode.Timeout, capnweb.NameError, "no navigation of the tab completed: %v", err)
		}
		return none{}, err
	})
	return err
}

// WaitFor waits for a CSS selector to match, or for a target to be in
// opts.State: visible (the default), hidden, attached or detached. A
// selector with a state is waited for as the target {selector}.
func (a *tabAPI) WaitFor(ctx context.Context, id string, what capnweb.Value, opts waitForOptions) error {
	const api = "tab.waitFor"
	var tg, aimed *cdp.Locator // aimed: recorded even when refused
	var bad error
	switch w := what.(type) {
	case string:
		if opts.State != "" {
			tg = &cdp.Locator{Selector: w}
		}
	case *capnweb.Object:
		var l cdp.Locator
		if l, bad = decodeTarget(api, 1, w); bad == nil {
			tg, aimed = &l, &l
		}
	default:
		bad = codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.waitFor takes a CSS selector or a target")
	}
	state := cdp.StateVisible
	switch s := cdp.WaitState(opts.State); s {
	case "":
	case cdp.StateVisible, cdp.StateHidden, cdp.StateAttached, cdp.StateDetached:
		state = s
	default:
		if bad == nil {
			bad = codeErr(errcode.Invalid, capnweb.NameRangeError, "%s: state must be \"visible\", \"hidden\", \"attached\" or \"detached\", not %q", api, opts.State)
		}
	}
	_, err := invoke(ctx, a.r, mTabWaitFor, callReq{tab: id, timeout: opts.Timeout, target: aimed, refused: bad}, func(c *call) (none, error) {
		if tg != nil {
			c.aim(tg)
			return none{}, c.tab.WaitState(c.ctx, *tg, state)
		}
		css := what.(string)
		c.aim(&cdp.Locator{Selector: css})
		return none{}, c.tab.WaitFor(c.ctx, cdp.Selector(css))
	})
	return err
}

// read runs one reader on target, waiting for it up to timeout
// milliseconds (0: the host's default, as for an action), unless the
// method's own checks refused it (bad). Readers need only the browser
// grant: they run in the isolated world, never the page's code, and the
// tab's sites= still applies to the document they read.
func read[T any](ctx context.Context, r *Run, mid methodID, id string, tg cdp.Locator, timeout float64, bad error, f func(*cdp.Tab, context.Context, cdp.Locator) (T, error)) (T, error) {
	if bad == nil {
		bad = checkTarget(methods[mid].api, tg)
	}
	return invoke(ctx, r, mid, callReq{tab: id, timeout: timeout, refused: bad}, func(c *call) (T, error) {
		c.aim(&tg)
		return f(c.tab, c.ctx, tg)
	})
}

func (a *tabAPI) Text(ctx context.Context, id string, target cdp.Locator, opts readOptions) (string, error) {
	return read(ctx, a.r, mTabText, id, target, opts.Timeout, nil, (*cdp.Tab).Text)
}

func (a *tabAPI) Value(ctx context.Context, id string, target cdp.Locator, opts readOptions) (string, error) {
	return read(ctx, a.r, mTabValue, id, target, opts.Timeout, nil, (*cdp.Tab).Value)
}

// Attribute returns the attribute's value, or null when the element has
// none.
func (a *tabAPI) Attribute(ctx context.Context, id string, target cdp.Locator, name string, opts readOptions) (*string, error) {
	var bad error
	if name == "" {
		bad = codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.attribute needs an attribute name")
	}
	return read(ctx, a.r, mTabAttribute, id, target, opts.Timeout, bad, func(t *cdp.Tab, ctx context.Context, tg cdp.Locator) (*string, error) {
		s, ok, err := t.Attribute(ctx, tg, name)
		if !ok {
			return nil, err
		}
		return &s, err
	})
}

func (a *tabAPI) Checked(ctx context.Context, id string, target cdp.Locator, opts readOptions) (bool, error) {
	return read(ctx, a.r, mTabChecked, id, target, opts.Timeout, nil, (*cdp.Tab).Checked)
}

// Visible answers at once: it is a question about the page now.
func (a *tabAPI) Visible(ctx context.Context, id string, target cdp.Locator) (bool, error) {
	return read(ctx, a.r, mTabVisible, id, target, 0, nil, (*cdp.Tab).IsVisible)
}

// Count answers at once: it is a question about the page now.
func (a *tabAPI) Count(ctx context.Context, id string, target cdp.Locator) (int, error) {
	return read(ctx, a.r, mTabCount, id, target, 0, nil, (*cdp.Tab).Count)
}

// Expect checks e on target in the page until it holds or its timeout
// (0: readWait) passes: one call however long it takes, so an expectation
// that holds at once costs what a reader does. It fails with code
// expectation_failed, saying what was last seen.
func (a *tabAPI) Expect(ctx context.Context, id string, target cdp.Locator, e expectation) error {
	const api = "tab.expect"
	ce, bad := e.cdp(api)
	if bad == nil && ce.Kind.OfPage() {
		bad = codeErr(errcode.Invalid, capnweb.NameTypeError, "%s: %s is expected of the page: use tab.expectPage", api, e.Kind)
	}
	_, err := read(ctx, a.r, mTabExpect, id, target, e.Timeout, bad, func(t *cdp.Tab, ctx context.Context, tg cdp.Locator) (none, error) {
		return none{}, t.Expect(ctx, tg, ce)
	})
	return err
}

// compile compiles p as the host matches it: a pattern too large is
// limit_exceeded, one the host cannot match invalid. prefix starts the
// message of an invalid one.
func (p textPattern) compile(prefix string) (*cdp.Pattern, error) {
	return patternErr(prefix, func() (*cdp.Pattern, error) { return cdp.CompilePattern(p.Source, p.Flags) })
}

// patternErr gives the error of a pattern's compiling its code.
func patternErr(prefix string, compile func() (*cdp.Pattern, error)) (*cdp.Pattern, error) {
	p, err := compile()
	var le *cdp.PatternLimitError
	if errors.As(err, &le) {
		return nil, limitErr(le.Limit, "%v", err)
	}
	if err != nil {
		return nil, codeErr(errcode.Invalid, capnweb.NameTypeError, "%s%s", prefix, err.Error())
	}
	return p, nil
}

// cdp checks e and builds the cdp.Expectation it asks for.
func (e expectation) cdp(api string) (cdp.Expectation, error) {
	bad := func(format string, args ...any) (cdp.Expectation, error) {
		return cdp.Expectation{}, codeErr(errcode.Invalid, capnweb.NameTypeError, api+": "+format, args...)
	}
	out := cdp.Expectation{Kind: cdp.ExpectKind(e.Kind), Not: e.Not}
	textual := e.Text != nil || e.Pattern != nil
	if e.Name != "" && out.Kind != cdp.ExpectAttribute {
		return bad("%s takes no attribute name", e.Kind)
	}
	switch out.Kind {
	case cdp.ExpectAttribute:
		switch {
		case e.Name == "" || len(e.Name) > maxAttributeName:
			return bad("attribute expects an attribute name of 1 to %d bytes", maxAttributeName)
		case e.Count != nil || e.Text != nil && e.Pattern != nil:
			return bad("attribute takes a name and at most a text or a pattern")
		}
		out.Name, out.AnyValue = e.Name, !textual
		if textual {
			return e.textOf(api, out)
		}
	case cdp.ExpectText, cdp.ExpectContainsText, cdp.ExpectValue, cdp.ExpectClass, cdp.ExpectURL, cdp.ExpectTitle:
		switch {
		case e.Count != nil:
			return bad("%s takes a text or a pattern, not a count", e.Kind)
		case e.Text != nil && e.Pattern != nil, !textual:
			return bad("%s expects a text or a pattern", e.Kind)
		}
		return e.textOf(api, out)
	case cdp.ExpectCount:
		if textual || e.Count == nil || *e.Count < 0 {
			return bad("count expects a number of elements, 0 or more, and nothing else")
		}
		out.Count = *e.Count
	case cdp.ExpectVisible, cdp.ExpectHidden, cdp.ExpectChecked, cdp.ExpectUnchecked,
		cdp.ExpectEnabled, cdp.ExpectDisabled, cdp.ExpectFocused, cdp.ExpectEditable:
		if textual || e.Count != nil {
			return bad("%s takes no text, pattern or count", e.Kind)
		}
	default:
		return bad("nothing to expect called %q: use text, containsText, value, visible, hidden, checked, unchecked, count, attribute, class, enabled, disabled, focused, editable, url or title", e.Kind)
	}
	return out, nil
}

// maxAttributeName bounds the attribute name an expectation sends the
// page: none is near it.
const maxAttributeName = 1 << 10

// textOf completes out with e's text or compiled pattern.
func (e expectation) textOf(api string, out cdp.Expectation) (cdp.Expectation, error) {
	switch {
	case e.Text != nil:
		out.Text = *e.Text
	default:
		p, err := e.Pattern.compile(api + ": ")
		if err != nil {
			return cdp.Expectation{}, err
		}
		out.Pattern = p
	}
	return out, nil
}

// Screenshot captures the tab, in the background too, within the default
// wait: it takes no timeout, and a page or host that never gives the
// pixels must not hold the script.
func (a *tabAPI) Screenshot(ctx context.Context, id string, o screenshotOptions) ([]byte, error) {
	return invoke(ctx, a.r, mTabScreenshot, callReq{tab: id}, func(c *call) ([]byte, error) {
		so := cdp.ScreenshotOptions{FullPage: o.FullPage}
		if s, ok := a.r.m.cfg.Host.Tabs.(Screenshotter); ok {
			so.Capture = func(ctx context.Context) ([]byte, error) {
				return s.Screenshot(ctx, a.r.Info(), id, so.FullPage)
			}
		}
		return c.tab.Screenshot(c.ctx, so)
	})
}

// Close closes a tab the run opened. The user's own tabs (found with
// active, find, all or triggered) are the user's to close.
func (a *tabAPI) Close(ctx context.Context, id string) error {
	_, err := invoke(ctx, a.r, mTabClose, callReq{tab: id}, func(c *call) (none, error) {
		a.r.mu.Lock()
		t := a.r.tabs[id]
		if t != nil && t.opened {
			delete(a.r.tabs, id)
		}
		a.r.mu.Unlock()
		if t == nil {
			return none{}, codeErr(errcode.NotFound, capnweb.NameError, "no tab %q", id)
		}
		if !t.opened {
			a.r.logAction(cdp.Action{Method: "close", Outcome: string(errcode.NotGranted)})
			return none{}, codeErr(errcode.NotGranted, capnweb.NameError, "tab.close closes only tabs this script opened with tabs.open; this tab is the user's")
		}
		return none{}, a.r.dropTab(c.ctx, t, true)
	})
	return err
}

// pageJsAPI is pageJs: code in the page's main world.
type pageJsAPI struct{ r *Run }

// Evaluate keeps the key order of objects both ways: arguments arrive as
// ordered objects and results are decoded as JSON.parse would, so a
// script's Object.keys sees the page's order.
func (a *pageJsAPI) Evaluate(ctx context.Context, id, source string, args []capnweb.Value) (any, error) {
	return invoke(ctx, a.r, mPageEvaluate, callReq{tab: id}, func(c *call) (any, error) {
		ctx, t := c.ctx, c.tab
		vals := make([]any, len(args))
		for i, v := range args {
			vals[i] = v
		}
		raw, err := t.Evaluate(ctx, source, vals...)
		if err != nil {
			if errcode.Of(err) == errcode.NotSerializable {
				return nil, codeErr(errcode.NotSerializable, capnweb.NameTypeError,
					"the function's result cannot be sent back as JSON (a DOM node, a window, a symbol or a circular object): return plain data, such as el.textContent")
			}
			return nil, browserErr(err)
		}
		if raw == nil {
			return capnweb.Undefined{}, nil
		}
		return a.r.decodeResult(raw, "an evaluate result")
	})
}

// formsAPI is forms: trusted form actions through the form runtime.
type formsAPI struct{ r *Run }

// formOpts builds the cdp options of a form action on tab id: the focus
// hook, a dry run and custom parts. The sites= check and the log belong
// to the tab.
func (a *formsAPI) formOpts(id string, o formOptions) cdp.FormOptions {
	fo := cdp.FormOptions{DryRun: o.DryRun, Parts: o.Parts}
	// A tab the run opened in the background stays there: its session
	// emulates focus, and focusing it through the host would show it,
	// making it the user's active tab and so every other run's.
	if !a.r.hiddenTab(id) {
		fo.Focus = func(ctx context.Context) error { return a.r.m.cfg.Host.Tabs.Focus(ctx, a.r.Info(), id) }
	}
	return fo
}

// act runs one form action on target tg, unless the method's own checks
// refused it (bad): the target's check, then f under the call with the
// cdp options.
func act[T any](ctx context.Context, a *formsAPI, mid methodID, id string, tg cdp.Locator, o formOptions, bad error, f func(*call, cdp.Locator, cdp.FormOptions) (T, error)) (T, error) {
	if bad == nil {
		bad = checkTarget(methods[mid].api, tg)
	}
	return invoke(ctx, a.r, mid, callReq{tab: id, timeout: o.Timeout, refused: bad}, func(c *call) (T, error) {
		c.aim(&tg)
		return f(c, tg, a.formOpts(id, o))
	})
}

func (a *formsAPI) Fill(ctx context.Context, id string, target cdp.Locator, value string, opts formOptions) (cdp.FieldState, error) {
	return act(ctx, a, mFormsFill, id, target, opts, nil, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (cdp.FieldState, error) {
		return c.tab.Fill(c.ctx, tg, value, fo)
	})
}

func (a *formsAPI) Check(ctx context.Context, id string, target cdp.Locator, checked bool, opts formOptions) error {
	_, err := act(ctx, a, mFormsCheck, id, target, opts, nil, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (none, error) {
		return none{}, c.tab.Check(c.ctx, tg, checked, fo)
	})
	return err
}

// Select chooses one option (a string) and returns the label shown, or
// exactly the options of a list in a <select multiple> and returns their
// labels.
func (a *formsAPI) Select(ctx context.Context, id string, target cdp.Locator, option capnweb.Value, opts formOptions) (any, error) {
	var options []string
	var bad error
	switch o := option.(type) {
	case string:
	case []any:
		options = make([]string, len(o))
		for i, v := range o {
			s, ok := v.(string)
			if !ok {
				bad = codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.select: option %d is not a string", i+1)
				break
			}
			options[i] = s
		}
	default:
		bad = codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.select takes an option or a list of options")
	}
	return act(ctx, a, mFormsSelect, id, target, opts, bad, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (any, error) {
		if o, ok := option.(string); ok {
			return c.tab.Select(c.ctx, tg, o, fo)
		}
		labels, err := c.tab.SelectAll(c.ctx, tg, options, fo)
		if labels == nil {
			labels = []string{}
		}
		return labels, err
	})
}

// SetFiles puts files into a file input. Each path is resolved against
// the script's folder, as its read= grants are, and must be a file under
// one of them: a page gets only what the script could read itself.
func (a *formsAPI) SetFiles(ctx context.Context, id string, target cdp.Locator, paths []string, opts formOptions) error {
	const api = "tab.setFiles"
	real := make([]string, 0, len(paths))
	var bad error
	for _, p := range paths {
		rp, err := a.r.grantedFile(p)
		if err != nil {
			desc := ""
			if checkTarget(api, target) == nil {
				desc = target.String()
			}
			a.r.logAction(cdp.Action{Method: "setFiles", Target: desc, Outcome: string(errCodeOf(err))})
			bad = err
			break
		}
		real = append(real, rp)
	}
	_, err := act(ctx, a, mFormsSetFiles, id, target, opts, bad, func(c *call, tg cdp.Locator, fo cdp.FormOptions) (none, error) {
		return none{}, c.tab.SetFiles(c.ctx, tg, real, fo)
	})
	return err
}

// OnDialog sets how the tab answers the page's dialogs from now on:
// "accept", "dismiss", {accept, promptText}, or such answers by dialog
// type ({confirm: "accept", beforeunload: "accept"}; types left out are
// dismissed). Accepting is acting on the page as the user would, so it
// needs the forms grant; without it every dialog is dismissed.
func (a *formsAPI) OnDialog(ctx context.Context, id string, answer capnweb.Value) error {
	p, bad := dialogPolicyOf(answer)
	_, err := invoke(ctx, a.r, mFormsOnDialog, callReq{tab: id, refused: bad}, func(c *call) (none, error) {
		c.rt.dmu.Lock()
		c.rt.dialogs = p
		c.rt.dmu.Unlock()
		return none{}, nil
	})
	return err
}

// Press presses key, on opts.target when given (focusing it first), else on
// whatever has focus; opts.modifiers lists held keys.
func (a *formsAPI) Press(ctx context.Context, id, key string, o pressOptions) error {
	mods, bad := modifiersOf(o.Modifiers)
	if bad == nil && o.Target != nil {
		bad = checkTarget("tab.press", *o.Target)
	}
	_, err := invoke(ctx, a.r, mFormsPress, callReq{tab: id, timeout: o.Timeout, refused: bad}, func(c *call) (none, error) {
		fo := a.formOpts(id, o.formOptions)
		if o.Target != nil {
			c.aim(o.Target)
			return none{}, c.tab.PressElement(c.ctx, *o.Target, key, mods, fo)
		}
		return none{}, c.tab.PressKey(c.ctx, key, mods, fo)
	})
	return err
}
