package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
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

// QA runs a smoke check on a tab of a launched app without navigating it:
// the expected text and selector, optionally the page's console errors and
// uncaught exceptions since the document loaded (the browser keeps them:
// [cdp.Tab.ConsoleHistory] reads them without disturbing the tab), and
// optionally a screenshot. A failed check is reported in the result, not as
// an error; the error is for bad options (ErrValidation) and a tab that can
// no longer be read.
func QA(ctx context.Context, tab *cdp.Tab, opts QAOptions) (QAResult, error) {
	var res QAResult
	if opts.ExpectedText == "" && opts.ExpectedSelector == "" {
		return res, fmt.Errorf("%w: qa needs ExpectedText or ExpectedSelector", ErrValidation)
	}
	if opts.Wait < 0 {
		return res, fmt.Errorf("%w: negative wait", ErrValidation)
	}
	if opts.ExpectedSelector != "" {
		_, err := tab.Evaluate(ctx, `(s) => { document.createDocumentFragment().querySelector(s); }`, opts.ExpectedSelector)
		var ee *cdp.EvalError
		if errors.As(err, &ee) {
			return res, fmt.Errorf("%w: selector %q: %s", ErrValidation, opts.ExpectedSelector, ee.Message)
		}
		if err != nil {
			return res, err
		}
	}
	check := func(name string, cond cdp.Condition, detail string) error {
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
			ok, err = tab.Holds(ctx, cond)
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
		cond := cdp.Predicate(`(t) => !!document.body && document.body.innerText.includes(t)`, opts.ExpectedText)
		if err := check("text", cond, fmt.Sprintf("text %q not found", opts.ExpectedText)); err != nil {
			return res, err
		}
	}
	if opts.ExpectedSelector != "" {
		if err := check("selector", cdp.Selector(opts.ExpectedSelector), fmt.Sprintf("no element matches %q", opts.ExpectedSelector)); err != nil {
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
		png, err := tab.Screenshot(ctx, cdp.ScreenshotOptions{})
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

func listCheck(name string, items []string, what string) QACheck {
	c := QACheck{Name: name, Pass: len(items) == 0}
	if !c.Pass {
		c.Detail = fmt.Sprintf("%d %s(s): %s", len(items), what, strings.Join(items, "; "))
	}
	return c
}

// pageHistory reads the console errors (and failed asserts) and the
// uncaught exceptions the browser stored for the tab's current document.
func pageHistory(ctx context.Context, tab *cdp.Tab) (console, exceptions []string, err error) {
	messages, thrown, err := tab.ConsoleHistory(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range messages {
		if m.Type == "error" || m.Type == "assert" {
			console = append(console, m.Text)
		}
	}
	for _, e := range thrown {
		exceptions = append(exceptions, strings.TrimSpace(e.Name+": "+e.Message))
	}
	return console, exceptions, nil
}
