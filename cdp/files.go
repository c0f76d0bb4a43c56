package cdp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
)

// elementFn returns the element behind a ref of the form runtime, as a
// remote object (null when the ref is no longer good).
const elementFn = `function (h, ref) {
  const f = globalThis.__tqForms;
  return f && globalThis.__tqFormsHash === h ? f.elementOf(ref) : null;
}`

// SetFiles puts the files at paths into the file input target names, as
// choosing them in the file picker would (the page gets input and change
// events), and reads the input's file count back: a count the page did
// not keep is a *NotCommittedError whose Kept is the count it holds. No paths clears the input; more than one
// needs an <input multiple>. A hidden input counts, since pages often
// hide theirs behind a styled label; a disabled one is errcode.Disabled, and
// any other element errcode.BadTarget.
//
// The paths must be absolute paths of regular files; which files a caller
// may hand a page is for the caller to decide (the runner allows only its
// script's read= grants). The browser reads them when the page uses them,
// not now. It is a form action: checked against the tab's sites for the
// realm the input is in, logged without the paths, and with opts.DryRun
// checked but not done.
func (fm *forms) SetFiles(ctx context.Context, loc Locator, paths []string, opts FormOptions) error {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return codeErr(errcode.Invalid, "%q is not an absolute path, so it cannot be uploaded", p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return codeErr(errcode.Invalid, "cannot upload %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			return codeErr(errcode.Invalid, "%s is not a regular file, so it cannot be uploaded", p)
		}
	}
	if paths == nil {
		paths = []string{}
	}
	desc := loc.String()
	return fm.action(ctx, "setFiles", loc, opts, func(ctx context.Context) error {
		ref, err := fm.pickRef(ctx, loc)
		if err != nil {
			return err
		}
		fr := fm.p.frameOfRef(ref)
		var in struct {
			Multiple bool
			Count    int
		}
		if err := fm.formCallIn(ctx, fr, desc, &in, "fileInput", ref); err != nil {
			return err
		}
		if len(paths) > 1 && !in.Multiple {
			return &LocatorError{Code: errcode.BadTarget, Target: desc, Message: fmt.Sprintf("the file input takes one file, not %d", len(paths))}
		}
		if opts.DryRun {
			return nil
		}
		if err := fm.setInputFiles(ctx, fr, desc, ref, paths); err != nil {
			return err
		}
		if err := fm.formCallIn(ctx, fr, desc, &in, "fileInput", ref); err != nil {
			return err
		}
		if in.Count != len(paths) {
			return &NotCommittedError{Target: desc, Kept: strconv.Itoa(in.Count)}
		}
		return nil
	})
}

// setInputFiles hands paths to the input behind ref: it fetches the
// element as an object of the isolated world (checked against the tab's
// sites like any call there) and gives that to DOM.setFileInputFiles.
func (fm *forms) setInputFiles(ctx context.Context, fr, desc, ref string, paths []string) error {
	return fm.withObject(ctx, fr, desc, ref, func(c *devtools.Client, id runtime.RemoteObjectID) error {
		if len(paths) == 0 {
			// DOM.setFileInputFiles leaves the files as they are when given
			// none; clearing the value is what the picker's cancel does.
			r, err := c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(clearFilesFn).SetObjectID(id))
			if err != nil {
				return fm.p.fail(err)
			}
			if r.ExceptionDetails != nil {
				return evalErrorOf(r.ExceptionDetails)
			}
			return nil
		}
		if err := c.DOM.SetFileInputFiles(ctx, dom.NewSetFileInputFilesArgs(paths).SetObjectID(id)); err != nil {
			return fm.p.fail(err)
		}
		return nil
	})
}

// clearFilesFn empties a file input (this) and tells the page, as the
// picker does.
const clearFilesFn = `function () {
  if (this.files.length === 0) return;
  this.value = "";
  this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
}`
