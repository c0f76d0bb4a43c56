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

func (a *tabAPI) URL(ctx context.Context, id string) (_ string, err error) {
	h := a.r.call(ctx, "tab.url", id)
	defer h.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return "", err
	}
	defer leave()
	ctx, cancel := boundWait(ctx)
	defer cancel()
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return "", err
	}
	h.on = t
	u, err := t.URL(ctx)
	if info, shown := a.r.hideLocal(TabInfo{URL: u}); !shown {
		u = info.URL // a local address the run may not reach is not told
	}
	return u, browserErr(err)
}

func (a *tabAPI) Title(ctx context.Context, id string) (_ string, err error) {
	h := a.r.call(ctx, "tab.title", id)
	defer h.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return "", err
	}
	defer leave()
	ctx, cancel := boundWait(ctx)
	defer cancel()
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return "", err
	}
	h.on = t
	s, err := t.Title(ctx)
	return s, browserErr(err)
}

// tabCall is a call on one of the run's tabs: its attached session and the
// call's context, bounded by the call's timeout. end releases the context.
type tabCall struct {
	ctx context.Context
	end context.CancelFunc
	tab *cdp.Tab
	// before is the page before a page action, for the trace (see
	// Config.TraceActionScreenshots); nil when not taken.
	before []byte
}

// startCall attaches tab id for a call bounded by timeout (milliseconds;
// 0 for the host's default).
//
// The call passes the run's gate (bounds.go), as every other host call
// does: none starts once the run has settled, and one under way then is
// cancelled.
func (r *Run) startCall(ctx context.Context, id string, timeout float64) (tabCall, error) {
	ctx, leave, err := r.enter(ctx, "")
	if err != nil {
		return tabCall{}, err
	}
	_, t, err := r.tab(ctx, id)
	if err != nil {
		leave()
		return tabCall{}, err
	}
	ctx, cancel := withTimeout(ctx, timeout)
	return tabCall{ctx: ctx, end: func() { cancel(); leave() }, tab: t}, nil
}

// navCall is a navigation under way: the tab call and when the
// navigation counts as done.
type navCall struct {
	tabCall
	until cdp.WaitUntil
}

// navigation checks a navigation's options and attaches tab id for it.
func (a *tabAPI) navigation(ctx context.Context, id string, o navigationOptions) (navCall, error) {
	until, err := o.waitUntil()
	if err != nil {
		return navCall{}, err
	}
	c, err := a.r.startCall(ctx, id, o.Timeout)
	return navCall{tabCall: c, until: until}, err
}

// Goto loads rawURL and returns the document's response: {status, url},
// status 0 when there was none (about:blank, a #fragment).
func (a *tabAPI) Goto(ctx context.Context, id, rawURL string, opts navigationOptions) (_ cdp.Response, err error) {
	h := a.r.call(ctx, "tab.goto", id)
	defer h.end(&err)
	c, err := a.navigation(ctx, id, opts)
	if err != nil {
		return cdp.Response{}, err
	}
	defer c.end()
	resp, err := c.tab.Goto(c.ctx, rawURL, c.until)
	if err := h.traced(c.tabCall, browserErr(err)); err != nil {
		return cdp.Response{}, err
	}
	return *resp, nil
}

func (a *tabAPI) WaitForNavigation(ctx context.Context, id string, opts navigationOptions) (err error) {
	h := a.r.call(ctx, "tab.waitForNavigation", id)
	defer h.end(&err)
	c, err := a.navigation(ctx, id, opts)
	if err != nil {
		return err
	}
	defer c.end()
	err = c.tab.WaitNavigated(c.ctx, c.until)
	if errors.Is(err, cdp.ErrTimeout) {
		err = codeErr(errcode.Timeout, capnweb.NameError, "no navigation of the tab completed: %v", err)
	} else {
		err = browserErr(err)
	}
	return h.traced(c.tabCall, err)
}

// WaitFor waits for a CSS selector to match, or for a target to be in
// opts.State: visible (the default), hidden, attached or detached. A
// selector with a state is waited for as the target {selector}.
func (a *tabAPI) WaitFor(ctx context.Context, id string, what capnweb.Value, opts waitForOptions) (err error) {
	const api = "tab.waitFor"
	h := a.r.call(ctx, api, id)
	defer h.end(&err)
	var tg *cdp.Locator
	switch w := what.(type) {
	case string:
		if opts.State != "" {
			tg = &cdp.Locator{Selector: w}
		}
	case *capnweb.Object:
		l, err := decodeTarget(api, 2, w)
		if err != nil {
			return err
		}
		tg = &l
		h.target = tg
	default:
		return codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.waitFor takes a CSS selector or a target")
	}
	state := cdp.StateVisible
	switch s := cdp.WaitState(opts.State); s {
	case "":
	case cdp.StateVisible, cdp.StateHidden, cdp.StateAttached, cdp.StateDetached:
		state = s
	default:
		return codeErr(errcode.Invalid, capnweb.NameRangeError, "%s: state must be \"visible\", \"hidden\", \"attached\" or \"detached\", not %q", api, opts.State)
	}
	c, err := a.r.startCall(ctx, id, opts.Timeout)
	if err != nil {
		return err
	}
	defer c.end()
	if tg != nil {
		h.target = tg
		return h.traced(c, browserErr(c.tab.WaitState(c.ctx, *tg, state)))
	}
	css := what.(string)
	h.target = &cdp.Locator{Selector: css}
	return h.traced(c, browserErr(c.tab.WaitFor(c.ctx, cdp.Selector(css))))
}

// read runs one reader on target, waiting for it up to timeout
// milliseconds (0: the host's default, as for an action). Readers need
// only the browser grant: they run in the isolated world, never the page's
// code, and the tab's sites= still applies to the document they read.
func (a *tabAPI) read(ctx context.Context, api, id string, tg cdp.Locator, timeout float64, f func(context.Context, *cdp.Tab, cdp.Locator) error) (err error) {
	h := a.r.call(ctx, api, id)
	defer h.end(&err)
	if err := checkTarget(api, tg); err != nil {
		return err
	}
	c, err := a.r.startCall(ctx, id, timeout)
	if err != nil {
		return err
	}
	defer c.end()
	h.target = &tg
	return h.traced(c, browserErr(f(c.ctx, c.tab, tg)))
}

func (a *tabAPI) Text(ctx context.Context, id string, target cdp.Locator, opts readOptions) (s string, err error) {
	err = a.read(ctx, "tab.text", id, target, opts.Timeout, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		s, err = t.Text(ctx, tg)
		return err
	})
	return s, err
}

func (a *tabAPI) Value(ctx context.Context, id string, target cdp.Locator, opts readOptions) (s string, err error) {
	err = a.read(ctx, "tab.value", id, target, opts.Timeout, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		s, err = t.Value(ctx, tg)
		return err
	})
	return s, err
}

// Attribute returns the attribute's value, or null when the element has
// none.
func (a *tabAPI) Attribute(ctx context.Context, id string, target cdp.Locator, name string, opts readOptions) (*string, error) {
	if name == "" {
		return nil, a.r.refused(ctx, "tab.attribute", id, codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.attribute needs an attribute name"))
	}
	var v *string
	err := a.read(ctx, "tab.attribute", id, target, opts.Timeout, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) error {
		s, ok, err := t.Attribute(ctx, tg, name)
		if ok {
			v = &s
		}
		return err
	})
	return v, err
}

func (a *tabAPI) Checked(ctx context.Context, id string, target cdp.Locator, opts readOptions) (b bool, err error) {
	err = a.read(ctx, "tab.checked", id, target, opts.Timeout, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		b, err = t.Checked(ctx, tg)
		return err
	})
	return b, err
}

// Visible answers at once: it is a question about the page now.
func (a *tabAPI) Visible(ctx context.Context, id string, target cdp.Locator) (b bool, err error) {
	err = a.read(ctx, "tab.visible", id, target, 0, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		b, err = t.IsVisible(ctx, tg)
		return err
	})
	return b, err
}

// Count answers at once: it is a question about the page now.
func (a *tabAPI) Count(ctx context.Context, id string, target cdp.Locator) (n int, err error) {
	err = a.read(ctx, "tab.count", id, target, 0, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) (err error) {
		n, err = t.Count(ctx, tg)
		return err
	})
	return n, err
}

// Expect checks e on target in the page until it holds or its timeout
// (0: readWait) passes: one call however long it takes, so an expectation
// that holds at once costs what a reader does. It fails with code
// expectation_failed, saying what was last seen.
func (a *tabAPI) Expect(ctx context.Context, id string, target cdp.Locator, e expectation) error {
	const api = "tab.expect"
	ce, err := e.cdp(api)
	if err == nil && ce.Kind.OfPage() {
		err = codeErr(errcode.Invalid, capnweb.NameTypeError, "%s: %s is expected of the page: use tab.expectPage", api, e.Kind)
	}
	if err != nil {
		return a.r.refused(ctx, api, id, err)
	}
	return a.read(ctx, api, id, target, e.Timeout, func(ctx context.Context, t *cdp.Tab, tg cdp.Locator) error {
		return t.Expect(ctx, tg, ce)
	})
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
func (a *tabAPI) Screenshot(ctx context.Context, id string, o screenshotOptions) (_ []byte, err error) {
	h := a.r.call(ctx, "tab.screenshot", id)
	defer h.end(&err)
	c, err := a.r.startCall(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	defer c.end()
	h.on = c.tab
	so := cdp.ScreenshotOptions{FullPage: o.FullPage}
	if s, ok := a.r.m.cfg.Host.Tabs.(Screenshotter); ok {
		so.Capture = func(ctx context.Context) ([]byte, error) {
			return s.Screenshot(ctx, a.r.Info(), id, so.FullPage)
		}
	}
	png, err := c.tab.Screenshot(c.ctx, so)
	return png, browserErr(err)
}

// Close closes a tab the run opened. The user's own tabs (found with
// active, find, all or triggered) are the user's to close.
func (a *tabAPI) Close(ctx context.Context, id string) (err error) {
	h := a.r.call(ctx, "tab.close", id)
	defer h.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return err
	}
	defer leave()
	a.r.mu.Lock()
	t := a.r.tabs[id]
	if t != nil && t.opened {
		delete(a.r.tabs, id)
	}
	a.r.mu.Unlock()
	if t == nil {
		return codeErr(errcode.NotFound, capnweb.NameError, "no tab %q", id)
	}
	if !t.opened {
		a.r.logAction(cdp.Action{Method: "close", Outcome: string(errcode.NotGranted)})
		return codeErr(errcode.NotGranted, capnweb.NameError, "tab.close closes only tabs this script opened with tabs.open; this tab is the user's")
	}
	ctx, cancel := boundWait(ctx)
	defer cancel()
	return browserErr(a.r.dropTab(ctx, t, true))
}

// pageJsAPI is pageJs: code in the page's main world.
type pageJsAPI struct{ r *Run }

// Evaluate keeps the key order of objects both ways: arguments arrive as
// ordered objects and results are decoded as JSON.parse would, so a
// script's Object.keys sees the page's order.
func (a *pageJsAPI) Evaluate(ctx context.Context, id, source string, args []capnweb.Value) (_ any, err error) {
	h := a.r.call(ctx, "tab.evaluate", id)
	defer h.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return nil, err
	}
	defer leave()
	ctx, cancel := boundWait(ctx)
	defer cancel()
	_, t, err := a.r.tab(ctx, id)
	if err != nil {
		return nil, err
	}
	h.on = t
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
}

// formsAPI is forms: trusted form actions through the form runtime.
type formsAPI struct{ r *Run }

// formCall is a form action under way: the tab call and the cdp options
// of the action.
type formCall struct {
	tabCall
	opts cdp.FormOptions
}

// start attaches tab id for one action and builds its cdp options: the
// focus hook, a dry run and custom parts. The sites= check and the log
// belong to the tab.
func (a *formsAPI) start(ctx context.Context, id string, o formOptions) (formCall, error) {
	c, err := a.r.startCall(ctx, id, o.Timeout)
	if err != nil {
		return formCall{}, err
	}
	c.before = a.r.shotBefore(c)
	fc := formCall{tabCall: c, opts: cdp.FormOptions{DryRun: o.DryRun, Parts: o.Parts}}
	// A tab the run opened in the background stays there: its session
	// emulates focus, and focusing it through the host would show it,
	// making it the user's active tab and so every other run's.
	if !a.r.hiddenTab(id) {
		fc.opts.Focus = func(ctx context.Context) error { return a.r.m.cfg.Host.Tabs.Focus(ctx, a.r.Info(), id) }
	}
	return fc, nil
}

// act runs one form action on target tg: the check, the timeout, then f.
func (a *formsAPI) act(ctx context.Context, api, id string, tg cdp.Locator, o formOptions, f func(formCall, cdp.Locator) error) (err error) {
	h := a.r.call(ctx, api, id)
	defer h.end(&err)
	if err := checkTarget(api, tg); err != nil {
		return err
	}
	c, err := a.start(ctx, id, o)
	if err != nil {
		return err
	}
	defer c.end()
	h.target = &tg
	return h.traced(c.tabCall, browserErr(f(c, tg)))
}

func (a *formsAPI) Fill(ctx context.Context, id string, target cdp.Locator, value string, opts formOptions) (cdp.FieldState, error) {
	var st cdp.FieldState
	err := a.act(ctx, "tab.fill", id, target, opts, func(c formCall, tg cdp.Locator) (err error) {
		st, err = c.tab.Fill(c.ctx, tg, value, c.opts)
		return err
	})
	return st, err
}

func (a *formsAPI) Check(ctx context.Context, id string, target cdp.Locator, checked bool, opts formOptions) error {
	return a.act(ctx, "tab.check", id, target, opts, func(c formCall, tg cdp.Locator) error {
		return c.tab.Check(c.ctx, tg, checked, c.opts)
	})
}

// Select chooses one option (a string) and returns the label shown, or
// exactly the options of a list in a <select multiple> and returns their
// labels.
func (a *formsAPI) Select(ctx context.Context, id string, target cdp.Locator, option capnweb.Value, opts formOptions) (any, error) {
	const api = "tab.select"
	switch o := option.(type) {
	case string:
		var label string
		err := a.act(ctx, api, id, target, opts, func(c formCall, tg cdp.Locator) (err error) {
			label, err = c.tab.Select(c.ctx, tg, o, c.opts)
			return err
		})
		return label, err
	case []any:
		options := make([]string, len(o))
		for i, v := range o {
			s, ok := v.(string)
			if !ok {
				return nil, a.r.refused(ctx, api, id, codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.select: option %d is not a string", i+1))
			}
			options[i] = s
		}
		var labels []string
		err := a.act(ctx, api, id, target, opts, func(c formCall, tg cdp.Locator) (err error) {
			labels, err = c.tab.SelectAll(c.ctx, tg, options, c.opts)
			return err
		})
		if labels == nil {
			labels = []string{}
		}
		return labels, err
	}
	return nil, a.r.refused(ctx, api, id, codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.select takes an option or a list of options"))
}

// SetFiles puts files into a file input. Each path is resolved against
// the script's folder, as its read= grants are, and must be a file under
// one of them: a page gets only what the script could read itself.
func (a *formsAPI) SetFiles(ctx context.Context, id string, target cdp.Locator, paths []string, opts formOptions) error {
	const api = "tab.setFiles"
	real := make([]string, 0, len(paths))
	for _, p := range paths {
		rp, err := a.r.grantedFile(p)
		if err != nil {
			desc := ""
			if checkTarget(api, target) == nil {
				desc = target.String()
			}
			a.r.logAction(cdp.Action{Method: "setFiles", Target: desc, Outcome: string(errCodeOf(err))})
			return a.r.refused(ctx, api, id, err)
		}
		real = append(real, rp)
	}
	return a.act(ctx, api, id, target, opts, func(c formCall, tg cdp.Locator) error {
		return c.tab.SetFiles(c.ctx, tg, real, c.opts)
	})
}

// OnDialog sets how the tab answers the page's dialogs from now on:
// "accept", "dismiss", {accept, promptText}, or such answers by dialog
// type ({confirm: "accept", beforeunload: "accept"}; types left out are
// dismissed). Accepting is acting on the page as the user would, so it
// needs the forms grant; without it every dialog is dismissed.
func (a *formsAPI) OnDialog(ctx context.Context, id string, answer capnweb.Value) (err error) {
	h := a.r.call(ctx, "tab.onDialog", id)
	defer h.end(&err)
	ctx, leave, err := a.r.enter(ctx, "")
	if err != nil {
		return err
	}
	defer leave()
	p, err := dialogPolicyOf(answer)
	if err != nil {
		return err
	}
	rt, t, err := a.r.tab(ctx, id)
	if err != nil {
		return err
	}
	h.on = t
	rt.dmu.Lock()
	rt.dialogs = p
	rt.dmu.Unlock()
	return nil
}

// Press presses key, on opts.target when given (focusing it first), else on
// whatever has focus; opts.modifiers lists held keys.
func (a *formsAPI) Press(ctx context.Context, id, key string, o pressOptions) (err error) {
	const api = "tab.press"
	h := a.r.call(ctx, api, id)
	defer h.end(&err)
	mods, err := modifiersOf(o.Modifiers)
	if err != nil {
		return err
	}
	if o.Target != nil {
		if err := checkTarget(api, *o.Target); err != nil {
			return err
		}
	}
	c, err := a.start(ctx, id, o.formOptions)
	if err != nil {
		return err
	}
	defer c.end()
	if o.Target != nil {
		h.target = o.Target
		return h.traced(c.tabCall, browserErr(c.tab.PressElement(c.ctx, *o.Target, key, mods, c.opts)))
	}
	return h.traced(c.tabCall, browserErr(c.tab.PressKey(c.ctx, key, mods, c.opts)))
}
