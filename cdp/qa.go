package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
)

// QAOptions are the checks of [QA]. At least one of ExpectedText and
// ExpectedSelector is required.
type QAOptions struct {
	// ExpectedText must occur in the page's visible text.
	ExpectedText string
	// ExpectedSelector must match an element.
	ExpectedSelector string
	// Wait is how long the text and selector may take to appear. Zero
	// checks once.
	Wait time.Duration
	// CheckConsole fails the run if the page logged console errors.
	CheckConsole bool
	// CheckErrors fails the run if the page threw uncaught exceptions.
	CheckErrors bool
	// ScreenshotPath, when set, is where a PNG of the viewport is written.
	ScreenshotPath string
}

// QACheck is one check of a QA run.
type QACheck struct {
	Name   string // "text", "selector", "console", "errors", "screenshot"
	Pass   bool
	Detail string
}

// QAResult is the outcome of [QA].
type QAResult struct {
	Pass   bool
	Checks []QACheck
	// Diagnostics.
	URL, Title string
	// ConsoleErrors are the page's console errors (and failed asserts).
	ConsoleErrors []string
	// Exceptions are the page's uncaught exceptions.
	Exceptions []string
	// Screenshot is the path written, if any.
	Screenshot string
}

// QA runs a smoke check on a tab without navigating it: the expected text
// and selector, optionally the page's console errors and uncaught
// exceptions since the document loaded (the browser keeps them; they are
// read from a second, short-lived session so the tab is not disturbed), and
// optionally a screenshot. A failed check is reported in the result, not as
// an error; the error is for bad options (ErrValidation) and a tab that can
// no longer be read.
func QA(ctx context.Context, tab *Tab, opts QAOptions) (QAResult, error) {
	var res QAResult
	if opts.ExpectedText == "" && opts.ExpectedSelector == "" {
		return res, fmt.Errorf("%w: qa needs ExpectedText or ExpectedSelector", ErrValidation)
	}
	if opts.Wait < 0 {
		return res, fmt.Errorf("%w: negative wait", ErrValidation)
	}
	if opts.ExpectedSelector != "" {
		_, err := tab.Evaluate(ctx, `(s) => { document.createDocumentFragment().querySelector(s); }`, opts.ExpectedSelector)
		var ee *EvalError
		if errors.As(err, &ee) {
			return res, fmt.Errorf("%w: selector %q: %s", ErrValidation, opts.ExpectedSelector, ee.Message)
		}
		if err != nil {
			return res, err
		}
	}
	check := func(name string, cond Condition, detail string) error {
		var err error
		if opts.Wait > 0 {
			wctx, cancel := context.WithTimeout(ctx, opts.Wait)
			err = tab.WaitFor(wctx, cond)
			cancel()
			if errors.Is(err, ErrTimeout) && ctx.Err() == nil {
				res.Checks = append(res.Checks, QACheck{Name: name, Detail: detail + " after " + opts.Wait.String()})
				return nil
			}
		} else {
			var ok bool
			ok, err = tab.holds(ctx, cond)
			if err == nil && !ok {
				res.Checks = append(res.Checks, QACheck{Name: name, Detail: detail})
				return nil
			}
		}
		if err != nil {
			return err
		}
		res.Checks = append(res.Checks, QACheck{Name: name, Pass: true})
		return nil
	}
	if opts.ExpectedText != "" {
		cond := Predicate(`(t) => !!document.body && document.body.innerText.includes(t)`, opts.ExpectedText)
		if err := check("text", cond, fmt.Sprintf("text %q not found", opts.ExpectedText)); err != nil {
			return res, err
		}
	}
	if opts.ExpectedSelector != "" {
		if err := check("selector", Selector(opts.ExpectedSelector), fmt.Sprintf("no element matches %q", opts.ExpectedSelector)); err != nil {
			return res, err
		}
	}
	if opts.CheckConsole || opts.CheckErrors {
		console, exceptions, err := pageHistory(ctx, tab)
		if err != nil {
			return res, err
		}
		res.ConsoleErrors, res.Exceptions = console, exceptions
		if opts.CheckConsole {
			res.Checks = append(res.Checks, listCheck("console", console, "console error"))
		}
		if opts.CheckErrors {
			res.Checks = append(res.Checks, listCheck("errors", exceptions, "uncaught exception"))
		}
	}
	if opts.ScreenshotPath != "" {
		c := QACheck{Name: "screenshot"}
		png, err := tab.Screenshot(ctx, ScreenshotOptions{})
		if err == nil {
			err = os.WriteFile(opts.ScreenshotPath, png, 0o644)
		}
		if err != nil {
			c.Detail = err.Error()
		} else {
			c.Pass, res.Screenshot = true, opts.ScreenshotPath
		}
		res.Checks = append(res.Checks, c)
	}
	res.URL, _ = tab.URL(ctx)
	res.Title, _ = tab.Title(ctx)
	res.Pass = true
	for _, c := range res.Checks {
		res.Pass = res.Pass && c.Pass
	}
	return res, nil
}

// holds checks cond once.
func (t *Tab) holds(ctx context.Context, cond Condition) (bool, error) {
	cargs, err := callArgs(cond.args)
	if err != nil {
		return false, err
	}
	v, err := t.call(ctx, cond.world, cond.fn, cargs)
	return string(v) == "true", err
}

func listCheck(name string, items []string, what string) QACheck {
	c := QACheck{Name: name, Pass: len(items) == 0}
	if !c.Pass {
		c.Detail = fmt.Sprintf("%d %s(s): %s", len(items), what, strings.Join(items, "; "))
	}
	return c
}

// pageHistory reads the console errors and uncaught exceptions the browser
// stored for the tab's current document. Enabling the Runtime domain on a
// new session makes the browser replay them before it answers, so a short
// session sees the whole history without touching the tab's own.
func pageHistory(ctx context.Context, tab *Tab) (console, exceptions []string, err error) {
	b := tab.b
	r, err := b.c.Target.AttachToTarget(ctx, target.NewAttachToTargetArgs(target.ID(tab.id)).SetFlatten(true))
	if err != nil {
		return nil, nil, b.fail(err)
	}
	var mu sync.Mutex
	observe := func(method string, params json.RawMessage) {
		switch method {
		case "Runtime.consoleAPICalled":
			var ev runtime.ConsoleAPICalledReply
			if json.Unmarshal(params, &ev) != nil || (ev.Type != "error" && ev.Type != "assert") {
				return
			}
			parts := make([]string, 0, len(ev.Args))
			for _, a := range ev.Args {
				parts = append(parts, renderObject(a))
			}
			mu.Lock()
			console = append(console, strings.Join(parts, " "))
			mu.Unlock()
		case "Runtime.exceptionThrown":
			var ev struct {
				ExceptionDetails runtime.ExceptionDetails `json:"exceptionDetails"`
			}
			if json.Unmarshal(params, &ev) != nil {
				return
			}
			e := evalErrorOf(&ev.ExceptionDetails)
			mu.Lock()
			exceptions = append(exceptions, strings.TrimSpace(e.Name+": "+e.Message))
			mu.Unlock()
		}
	}
	conn, rt, err := b.m.open(ctx, string(r.SessionID), observe)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = b.c.Target.DetachFromTarget(dctx, target.NewDetachFromTargetArgs().SetSessionID(r.SessionID))
		b.m.drop(rt, &DetachedError{TargetID: tab.id, Reason: ErrDetached, Detail: "detached by client"})
		<-conn.Context().Done()
	}()
	if err := devtools.NewClient(conn).Runtime.Enable(ctx); err != nil {
		return nil, nil, tab.fail(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return console, exceptions, nil
}
