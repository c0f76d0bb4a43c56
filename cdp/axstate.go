package cdp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
)

// The role and state a widget reports, as the browser keeps them for
// screen readers. A form-associated custom element may take its role and
// state from ElementInternals (internals.role = "checkbox",
// internals.ariaChecked = "true"), which no DOM attribute shows and the
// isolated world cannot reach; the accessibility tree holds them alike for
// ARIA attributes and internals, and page code cannot change how it reads
// them.

// axState is one element's node in the accessibility tree.
type axState struct {
	Role     string
	Name     string
	Checked  string // "true", "false", "mixed", or "" for a node with no checked state
	Value    string // the node's value ("" when it has none)
	HasValue bool
	Readonly bool
	Expanded *bool
	HasPopup string // "menu", "listbox", "dialog", …; "" for none
}

// checkable reports whether the tree operates the node as a checkbox,
// switch or radio button.
func (s axState) checkable() bool {
	switch s.Role {
	case "checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio":
		return true
	}
	return false
}

// textual reports whether the tree operates the node as a text field.
func (s axState) textual() bool {
	switch s.Role {
	case "textbox", "searchbox", "TextField", "SearchBox":
		return true
	}
	return false
}

// withObject calls f with the element behind the runtime ref of frame
// fr, as an object of the isolated world, released afterwards.
func (fm *forms) withObject(ctx context.Context, fr, desc, ref string, f func(c *devtools.Client, id runtime.RemoteObjectID) error) error {
	rm, err := fm.p.world(ctx, fr)
	if err != nil {
		return err
	}
	c := rm.s.c
	args, err := callArgs([]any{formsHash, ref})
	if err != nil {
		return err
	}
	r, err := c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(elementFn).
		SetUniqueContextID(rm.uid).SetArguments(args))
	if err != nil {
		if contextGone(err) {
			return &LocatorError{Code: errcode.StaleRef, Target: desc, Message: "the page navigated; resolve the target again"}
		}
		return fm.p.fail(err)
	}
	if r.ExceptionDetails != nil {
		return evalErrorOf(r.ExceptionDetails)
	}
	if r.Result.ObjectID == nil {
		return &LocatorError{Code: errcode.StaleRef, Target: desc, Message: "the element is gone (the page navigated or re-rendered); resolve the target again"}
	}
	id := *r.Result.ObjectID
	defer func() {
		// The world would hold the element until its document goes.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = c.Runtime.ReleaseObject(cctx, runtime.NewReleaseObjectArgs(id))
	}()
	return f(c, id)
}

// axStateOf reads the tree's node for the runtime element ref of frame fr.
func (fm *forms) axStateOf(ctx context.Context, fr, desc, ref string) (axState, error) {
	var st axState
	err := fm.withObject(ctx, fr, desc, ref, func(c *devtools.Client, id runtime.RemoteObjectID) error {
		tree, err := c.Accessibility.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().SetObjectID(id).SetFetchRelatives(false))
		if err != nil {
			return fm.p.fail(err)
		}
		if len(tree.Nodes) > 0 {
			st = axStateFrom(tree.Nodes[0])
		}
		return nil
	})
	return st, err
}

// axFieldValue is what a custom text field holds, as the tree reads it:
// its own value, else that of the text field inside it (an input in its
// shadow tree, open or closed).
func (fm *forms) axFieldValue(ctx context.Context, fr, desc, ref string) (string, bool, error) {
	var v string
	var ok bool
	err := fm.withObject(ctx, fr, desc, ref, func(c *devtools.Client, id runtime.RemoteObjectID) error {
		tree, err := c.Accessibility.QueryAXTree(ctx, accessibility.NewQueryAXTreeArgs().SetObjectID(id))
		if err != nil {
			return fm.p.fail(err)
		}
		for _, n := range tree.Nodes {
			if st := axStateFrom(n); st.HasValue && st.textual() {
				v, ok = st.Value, true
				return nil
			}
		}
		return nil
	})
	return v, ok, err
}

// axStateFrom reads an accessibility node's role and state.
func axStateFrom(n accessibility.AXNode) axState {
	var st axState
	str := func(v *accessibility.AXValue) string {
		if v == nil || len(v.Value) == 0 {
			return ""
		}
		var s string
		if json.Unmarshal(v.Value, &s) == nil {
			return s
		}
		return string(v.Value) // booleans, numbers
	}
	if !n.Ignored {
		st.Role = str(n.Role)
	}
	st.Name = str(n.Name)
	if n.Value != nil && len(n.Value.Value) > 0 {
		st.Value, st.HasValue = str(n.Value), true
	}
	for _, p := range n.Properties {
		switch p.Name {
		case "checked":
			st.Checked = str(&p.Value)
		case "readonly":
			st.Readonly = str(&p.Value) == "true"
		case "expanded":
			b := str(&p.Value) == "true"
			st.Expanded = &b
		case "hasPopup":
			if v := str(&p.Value); v != "false" {
				st.HasPopup = v
			}
		}
	}
	return st
}

// settleWait is how long an action reads a widget's state back before it
// calls the state not kept: widgets re-render a task or a few frames
// after the input that changed them (Ionic, UI5 and Lit components
// render asynchronously), so the state seen at once may be the old one.
const settleWait = time.Second

// readBack calls read until it reports ok or the time within passes
// (settleWait, mostly), and returns what it read last.
func (fm *forms) readBack(ctx context.Context, within time.Duration, read func(ctx context.Context) (string, bool, error)) (string, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for i := 0; ; i++ {
		got, ok, err := read(ctx)
		if err != nil || ok {
			return got, ok, err
		}
		if err := fm.p.pause(rctx, formBackoff, i+1); err != nil {
			if rctx.Err() != nil {
				return got, false, nil // read long enough
			}
			return got, false, err // the tab's session ended
		}
	}
}

// checkedBack reads a checkbox's state after a click until it is want: an
// <input> from the DOM, any other element (ARIA, ElementInternals) from
// the tree, which reads aria-checked and internals alike.
func (fm *forms) checkedBack(ctx context.Context, fr, desc, ref string, input, want bool) error {
	got, ok, err := fm.readBack(ctx, settleWait, func(ctx context.Context) (string, bool, error) {
		if !input {
			st, err := fm.axStateOf(ctx, fr, desc, ref)
			return st.Checked, st.Checked == strconv.FormatBool(want), err
		}
		var r struct {
			Value bool `json:"value"`
		}
		err := fm.formCallIn(ctx, fr, desc, &r, "read", ref)
		return strconv.FormatBool(r.Value), r.Value == want, err
	})
	if err == nil && !ok {
		err = &NotCommittedError{Target: desc, Kept: got}
	}
	return err
}

// customWidget resolves loc when the runtime found no control it knows
// there (err), and reads the tree's role and state for it; ok is false
// when the tree does not call it what is wanted either, and err should
// stand.
func (fm *forms) customWidget(ctx context.Context, loc Locator, want func(axState) bool) (*Element, axState, bool) {
	el, err := fm.Resolve(ctx, loc)
	if err != nil || el.Kind != "other" {
		return nil, axState{}, false
	}
	st, err := fm.axStateOf(ctx, el.frame, loc.String(), el.Ref)
	if err != nil || !want(st) {
		return nil, axState{}, false
	}
	return el, st, true
}

// checkCustom is Check on an element the tree calls a checkbox, switch or
// radio button though no DOM attribute says so (a form-associated custom
// element whose role and state come from ElementInternals): its state is
// read from the tree, it is clicked as a person would, and its state read
// back from the tree. notBox is the error to return when it is none.
func (fm *forms) checkCustom(ctx context.Context, loc Locator, checked bool, opts FormOptions, notBox error) error {
	desc := loc.String()
	el, st, ok := fm.customWidget(ctx, loc, axState.checkable)
	if !ok {
		return notBox
	}
	if strings.HasSuffix(st.Role, "radio") && !checked {
		return &LocatorError{Code: errcode.BadTarget, Target: desc, Message: "a radio button cannot be unchecked; check another one"}
	}
	if (st.Checked == "true") == checked || opts.DryRun {
		return nil
	}
	ref := Locator{Ref: el.Ref}
	if _, err := fm.clickReady(ctx, ref, need{Act: "click"}, nil); err != nil {
		return named(err, desc)
	}
	return fm.checkedBack(ctx, el.frame, desc, el.Ref, false, checked)
}

// fillCustom is Fill on an element the tree calls a text field though the
// runtime cannot tell (a custom element whose role comes from
// ElementInternals, typing into a field of its own shadow tree): it is
// clicked to focus it as a person would, its text selected and replaced
// by typing, and what it holds read back from the tree.
func (fm *forms) fillCustom(ctx context.Context, loc Locator, value string, opts FormOptions, notField error) (FieldState, error) {
	desc := loc.String()
	el, st, ok := fm.customWidget(ctx, loc, axState.textual)
	if !ok {
		return FieldState{}, notField
	}
	if st.Readonly {
		return FieldState{}, &LocatorError{Code: errcode.Readonly, Target: desc, Message: "the field is read-only", Candidates: []Candidate{el.Element}}
	}
	if opts.DryRun {
		return FieldState{}, nil
	}
	if _, err := fm.clickReady(ctx, Locator{Ref: el.Ref}, need{Act: "click"}, nil); err != nil {
		return FieldState{}, named(err, desc)
	}
	if err := hostFocus(ctx, opts); err != nil {
		return FieldState{}, err
	}
	err := fm.p.pressIn(ctx, el.frame, "a", Ctrl)
	if err == nil && value == "" {
		err = fm.p.pressIn(ctx, el.frame, "Delete", 0)
	} else if err == nil {
		err = fm.p.insertTextIn(ctx, el.frame, value)
	}
	if err != nil {
		return FieldState{}, err
	}
	got, ok, err := fm.readBack(ctx, settleWait, func(ctx context.Context) (string, bool, error) {
		v, has, err := fm.axFieldValue(ctx, el.frame, desc, el.Ref)
		if err == nil && !has {
			// No value anywhere in the tree: the text it shows.
			var r struct {
				Value string `json:"value"`
			}
			err = fm.formCallIn(ctx, el.frame, desc, &r, "readOf", el.Ref, "text", "")
			v = strings.TrimSpace(r.Value)
		}
		return v, v == value, err
	})
	if err == nil && !ok {
		err = &NotCommittedError{Target: desc, Kept: got}
	}
	return FieldState{Value: got}, err
}
