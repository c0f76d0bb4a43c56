package runner

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
)

// Rewrites sdk/contract.json and sdk/contract_types.ts from the capability
// objects (see GENERATED.md).
//go:generate go test -run ^TestContractIsCurrent$ . -args -update

// The script API's request objects. A script passes one of these as an
// options (or target, or report) object; capnweb decodes it strictly (the
// facades implement capnweb.StrictArgs), so every key it takes is named
// here, by its json tag or else its Go name in lowerCamel case.
//
// A key the type does not name is refused, not ignored, in every request:
// an option the host dropped silently (a dryRun it never saw) would do
// something other than what the script asked. A key whose value is
// undefined or null counts as absent. A refusal is a TypeError with code
// "invalid" naming the key, its fields as properties (see argError). The
// SDK checks most options before it sends them, so a script mostly meets
// these through a host and SDK that disagree, which the contract test
// exists to prevent.
// The results are the types the methods return, sent as capnweb sends a
// struct. runner/sdk/contract.json lists every method with these shapes;
// a test regenerates it from the capability objects and compares.

// notifyOptions is the options object of ui.notify.
type notifyOptions struct {
	// Level is info (the default), success, warning or error.
	Level Level `json:"level"`
}

// openTabOptions is the options object of tabs.open.
type openTabOptions struct {
	// Background opens the tab without showing it.
	Background bool `json:"background"`
	// Timeout bounds the wait for a tab slot and the load, in
	// milliseconds; absent, the wait for a slot is the run's and the
	// open and load take the host's default (30 s), as tab.goto does.
	Timeout float64 `json:"timeout"`
	// Seq is the SDK's number for a background open, in the order the
	// script made them, which the host's queue keeps.
	Seq *int `json:"seq"`
}

// navigationOptions is the options object of tab.goto and
// tab.waitForNavigation.
type navigationOptions struct {
	// WaitUntil is "load" (the default) or "domcontentloaded".
	WaitUntil string `json:"waitUntil"`
	// Timeout bounds the navigation, in milliseconds; 0 is the host's
	// default.
	Timeout float64 `json:"timeout"`
}

// waitUntil is the cdp form of WaitUntil, or an invalid error.
func (o navigationOptions) waitUntil() (cdp.WaitUntil, error) {
	switch o.WaitUntil {
	case "", "load":
		return cdp.Load, nil
	case "domcontentloaded":
		return cdp.DOMContentLoaded, nil
	}
	return "", codeErr(errcode.Invalid, capnweb.NameRangeError, "waitUntil must be \"load\" or \"domcontentloaded\", not %q", o.WaitUntil)
}

// waitForOptions is the options object of tab.waitFor.
type waitForOptions struct {
	// Timeout bounds the wait, in milliseconds; 0 is the host's default.
	Timeout float64 `json:"timeout"`
	// State is what to wait for: "visible" (the default), "hidden",
	// "attached" or "detached", as cdp.WaitState names them.
	State string `json:"state"`
}

// readOptions is the options object of the readers that wait for their
// target: tab.text, tab.value, tab.attribute, tab.checked and tab.table.
type readOptions struct {
	// Timeout bounds the wait for the target, in milliseconds; 0 is the
	// host's default, as for an action.
	Timeout float64 `json:"timeout"`
}

// expectation is tab.expect's condition: one kind of check (a
// cdp.ExpectKind), what it expects, and how long to keep checking.
type expectation struct {
	// Kind is text, containsText, value, visible, hidden, checked,
	// unchecked, count, attribute, class, enabled, disabled, focused or
	// editable for tab.expect; url or title for tab.expectPage.
	Kind string `json:"kind"`
	// Text is the text or value expected by text, containsText and value,
	// unless Pattern is given.
	Text *string `json:"text"`
	// Pattern is a regular expression the text or value must match.
	Pattern *textPattern `json:"pattern"`
	// Count is the number of elements count expects.
	Count *int `json:"count"`
	// Name is the attribute attribute expects; without Text or Pattern,
	// it need only be there.
	Name string `json:"name"`
	// Not turns the expectation round: it holds once the condition does
	// not.
	Not bool `json:"not"`
	// Timeout bounds the checking, in milliseconds; 0 is
	// cdp.DefaultReadWait.
	Timeout float64 `json:"timeout"`
}

// urlMatch is the address tab.waitForURL waits for: URL, a glob (* is
// any run of characters but a slash, ** any run; without a star, the
// exact address), or Pattern; exactly one of them.
type urlMatch struct {
	URL     *string      `json:"url"`
	Pattern *textPattern `json:"pattern"`
}

// compile checks m and compiles it as cdp matches addresses.
func (m urlMatch) compile() (*cdp.Pattern, error) {
	switch {
	case (m.URL == nil) == (m.Pattern == nil):
		return nil, codeErr(errcode.Invalid, capnweb.NameTypeError, "it takes an address, a glob or a RegExp")
	case m.Pattern != nil:
		return m.Pattern.compile("")
	}
	return patternErr("", func() (*cdp.Pattern, error) { return cdp.GlobPattern(*m.URL) })
}

// checkTimeout is the one rule for a request's timeout, in milliseconds:
// 0 (or absent) is the host's default for the call; any other value must
// be positive and finite. The SDK sends what the script gave.
func checkTimeout(api string, ms float64) error {
	if ms == 0 || ms > 0 && !math.IsInf(ms, 1) {
		return nil
	}
	return codeErr(errcode.Invalid, capnweb.NameRangeError, "%s: timeout must be a positive, finite number of milliseconds (or 0 for the default), not %v", api, ms)
}

// textPattern is a JavaScript RegExp as it crosses the bridge.
type textPattern struct {
	Source string `json:"source"`
	Flags  string `json:"flags"`
}

// screenshotOptions is the options object of tab.screenshot. A
// screenshot takes no timeout: it ends after the host's default (30 s).
type screenshotOptions struct {
	// FullPage captures the whole page, not only the visible part.
	FullPage bool `json:"fullPage"`
}

// formOptions is the options object of the form actions: fill, check,
// select, setFiles, dragTo and focus, and the base of the others'.
type formOptions struct {
	// DryRun resolves and checks the target and changes nothing.
	DryRun bool `json:"dryRun"`
	// Parts are CSS selectors for the parts of a custom control, by name
	// ("trigger", "option", "value").
	Parts map[string]string `json:"parts"`
	// Timeout bounds the wait for the target, in milliseconds; 0 is the
	// host's default.
	Timeout float64 `json:"timeout"`
}

// pressOptions is the options object of tab.press.
type pressOptions struct {
	formOptions
	// Target is the element to focus before the key is pressed; nil
	// presses it on whatever has focus.
	Target *cdp.Locator `json:"target"`
	// Modifiers are the keys held down: Alt, Control (or Ctrl), Meta,
	// Shift.
	Modifiers []string `json:"modifiers"`
}

// position is a point of an element, from its top left corner, in CSS
// pixels.
type position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// hoverOptions is the options object of tab.hover.
type hoverOptions struct {
	formOptions
	// Modifiers are the keys held down, as for tab.press.
	Modifiers []string `json:"modifiers"`
	// Position is where to point; nil is the centre of the element's
	// visible part.
	Position *position `json:"position"`
}

// dblclickOptions is the options object of tab.dblclick.
type dblclickOptions struct {
	hoverOptions
	// Button is "left" (the default), "right" or "middle".
	Button string `json:"button"`
}

// clickOptions is the options object of tab.click.
type clickOptions struct {
	dblclickOptions
	// ClickCount is how many clicks make the gesture, 1 (the default) to
	// cdp.MaxClickCount.
	ClickCount int `json:"clickCount"`
}

// typeOptions is the options object of tab.type.
type typeOptions struct {
	formOptions
	// Delay is the pause between key presses, in milliseconds; 0 (the
	// default) presses them one after another.
	Delay float64 `json:"delay"`
}

// dialogAnswers is tab.onDialog's answers by dialog type; each is
// "accept", "dismiss" or a dialogAnswer object. A type left out is
// dismissed.
type dialogAnswers struct {
	Alert        capnweb.Value `json:"alert"`
	Confirm      capnweb.Value `json:"confirm"`
	Prompt       capnweb.Value `json:"prompt"`
	Beforeunload capnweb.Value `json:"beforeunload"`
}

// dialogAnswerOfType is one of dialogAnswers' answers and its dialog type.
type dialogAnswerOfType struct {
	typ    string
	answer capnweb.Value
}

// byType lists the answers by dialog type, in the order of the fields.
func (d dialogAnswers) byType() []dialogAnswerOfType {
	return []dialogAnswerOfType{{"alert", d.Alert}, {"confirm", d.Confirm}, {"prompt", d.Prompt}, {"beforeunload", d.Beforeunload}}
}

// dialogAnswer is an answer to a dialog in object form.
type dialogAnswer struct {
	// Accept presses OK; false presses Cancel. It is required.
	Accept *bool `json:"accept"`
	// PromptText is what an accepted prompt returns to the page.
	PromptText string `json:"promptText"`
}

// ProgressEvent is the report of context.progress.
type ProgressEvent struct {
	Message string `json:"message"`
	// Fraction is how much is done, from 0 to 1; nil when unknown.
	Fraction *float64 `json:"fraction"`
}

// argError words for the script an argument capnweb refused to decode
// (see the facades' ArgError): a TypeError with code invalid naming the
// key, in api (tab.goto), whose properties are the refusal's fields
// (capnweb.DecodeError.Props: argument, path, key, takes and closest, or
// want and got), so that the SDK reads them rather than the message; a
// function where data goes is not_serializable, as everywhere a script
// hands the host a value.
func argError(api string, e *capnweb.DecodeError) error {
	what := argName(e)
	if e.Got == "a function" {
		return notDataErr(api, what)
	}
	msg := e.Message(what)
	if e.In == locatorType {
		msg += "; " + targetHint
	}
	return invalidArg(e, "", "%s: %s", api, msg)
}

// invalidArg is the invalid TypeError refusing e, worded by format; under
// is where e's value sits in its argument (".confirm"), "" for the
// argument itself.
func invalidArg(e *capnweb.DecodeError, under, format string, args ...any) error {
	props := e.Props()
	props["code"] = string(errcode.Invalid)
	props["path"] = under + e.Path
	return capnweb.Errorf(capnweb.NameTypeError, props, format, args...)
}

// argName is what a refused argument is called in messages: a locator is
// the target, a report the report, any other object the options, else
// the script's argument by its place (Arg counts the script's own, see
// scriptArg; 0 is the tab's ID, which the SDK sends).
func argName(e *capnweb.DecodeError) string {
	switch e.Type {
	case locatorType:
		return "target"
	case reflect.TypeFor[StepEvent](), reflect.TypeFor[ProgressEvent]():
		return "the report"
	}
	if e.Type != nil && e.Type.Kind() == reflect.Struct {
		return "options"
	}
	if e.Arg == 0 {
		return "the tab's ID"
	}
	return fmt.Sprintf("argument %d", e.Arg)
}

// scriptArg is e counted as the script counts its arguments: a method
// of a tab (capTab, capForms, capPageJS) gets the tab's ID first on the
// wire, which the script never passes, so tab.fill's value is its
// argument 2, not the wire's 3.
func scriptArg(cap permissions.Capability, method string, e *capnweb.DecodeError) *capnweb.DecodeError {
	if id, ok := methodByWire[[2]string{string(cap), method}]; !ok || !methods[id].tabFirst() {
		return e
	}
	c := *e
	c.Arg--
	return &c
}

// The facades taking request objects decode their arguments strictly
// (capnweb.StrictArgs); their refusals are worded by argError, under the
// name the method table gives (forms' methods are called on a tab), and
// count the script's own arguments.

func (a *uiAPI) ArgError(method string, err *capnweb.DecodeError) error {
	return argError(apiOf(capUI, method), scriptArg(capUI, method, err))
}

func (a *tabsAPI) ArgError(method string, err *capnweb.DecodeError) error {
	return argError(apiOf(capTabs, method), scriptArg(capTabs, method, err))
}

func (a *tabAPI) ArgError(method string, err *capnweb.DecodeError) error {
	return argError(apiOf(capTab, method), scriptArg(capTab, method, err))
}

func (a *formsAPI) ArgError(method string, err *capnweb.DecodeError) error {
	return argError(apiOf(capForms, method), scriptArg(capForms, method, err))
}

func (a *contextAPI) ArgError(method string, err *capnweb.DecodeError) error {
	return argError(apiOf(capContext, method), scriptArg(capContext, method, err))
}

// targetHint says what a locator looks like, after a refused one.
const targetHint = "a target is one of {label}, {placeholder}, {name}, {role, name}, {text}, {selector}, {testId} or {ref}, with within, hasText, has and nth to narrow it"

var locatorType = reflect.TypeFor[cdp.Locator]()

// checkTarget refuses a locator that cannot name an element, by cdp's
// rule (Locator.Check), before the call waits for a tab.
func checkTarget(api string, l cdp.Locator) error {
	err := l.Check()
	if err == nil {
		return nil
	}
	msg := err.Error()
	var le *cdp.LocatorError
	if errors.As(err, &le) {
		msg = le.Message
	}
	return codeErr(errcode.Invalid, capnweb.NameTypeError, "%s: %s; %s", api, msg, targetHint)
}

// decodeTarget decodes a locator that arrived as a capnweb.Value (in a
// union), the script's argument arg, and checks it, as a Locator parameter
// is.
func decodeTarget(api string, arg int, v capnweb.Value) (cdp.Locator, error) {
	var l cdp.Locator
	if err := capnweb.Decode(v, &l); err != nil {
		var de *capnweb.DecodeError
		if errors.As(err, &de) {
			de.Arg = arg
			return l, argError(api, de)
		}
		return l, err
	}
	return l, checkTarget(api, l)
}

// tsType is what the SDK's public TypeScript type says of one of the
// contract's object types (contract_types.ts, generated from this table
// and the Go types): its script-facing doc, and its keys'. A type the
// table leaves out is generated undocumented; the contract test fails on
// a key the Go type does not have.
type tsType struct {
	doc    string
	fields map[string]tsField
}

// tsField is one key of a tsType.
type tsField struct {
	doc string
	// ts is the type scripts see when it is narrower than the Go shape
	// (a string the host takes only some values of); "" is the shape.
	ts string
	// required: a request must have it (the host refuses one without).
	// A result's keys are all present, and so required.
	required bool
}

// Narrower types of the script API's keys.
const (
	tsTimeoutDoc = "How long to wait, in milliseconds. Default: the host's limit."
	tsModifiers  = `Modifier keys held down: "Alt", "Control", "Meta", "Shift".`
)

// tsTypes documents the contract's object types for scripts: deno doc and
// an editor show these words.
var tsTypes = map[string]tsType{
	"NavigationOptions": {doc: "Options of Tab.goto and Tab.waitForNavigation.", fields: map[string]tsField{
		"waitUntil": {doc: "Wait for the load event (default) or only for DOMContentLoaded.", ts: `"load" | "domcontentloaded"`},
		"timeout":   {doc: tsTimeoutDoc},
	}},
	"DownloadOptions": {doc: "Options of Tab.waitForDownload.", fields: map[string]tsField{
		"path": {required: true, doc: "Where the file goes, relative to the script's folder as write= grants are, and under one of them: " +
			"a folder (ending in \"/\", or one that exists), which the file goes into under the name the page suggests, made safe; or a file path."},
		"overwrite": {doc: `Replace a file already there; without it the call fails with code "invalid".`},
		"timeout":   {doc: "How long to wait for the download to begin and complete, in milliseconds. Default: the host's limit (30 s)."},
	}},
	"DownloadResult": {doc: "What Tab.waitForDownload resolves to: the file saved.", fields: map[string]tsField{
		"name": {doc: "The file's name."},
		"size": {doc: "Its size in bytes."},
		"path": {doc: `Where it went: relative to the script's folder (with "/") when options.path was relative.`},
	}},
	"Response": {doc: "What Tab.goto resolves to: the response the new document came with.", fields: map[string]tsField{
		"status": {doc: "The HTTP status, such as 200 or 404: a page that answers with an error status still loads, so check it. " +
			"0 when there was no response (about:blank, a #fragment of the same page)."},
		"url": {doc: "The address the document came from, after redirects (without its #fragment)."},
	}},
	"WaitForOptions": {doc: "Options of Tab.waitFor.", fields: map[string]tsField{
		"timeout": {doc: tsTimeoutDoc},
		"state": {doc: `What to wait for. Default "visible". "visible": an element the target names is shown; ` +
			`"hidden": none matches, or every match is hidden; "attached": some element matches, shown or hidden; "detached": none matches.`,
			ts: `"visible" | "hidden" | "attached" | "detached"`},
	}},
	"ReadOptions": {doc: "Options of the readers that wait for their target: text, value, attribute, checked and table.", fields: map[string]tsField{
		"timeout": {doc: "How long to wait for the target to be there, in milliseconds. Default 30000, as for an action."},
	}},
	"Expectation": {doc: "Expectation is what an expectation sends the host: one kind of check, what it expects, and how long to keep checking. " +
		"Scripts use Tab.expect. A RegExp travels as its source and flags; the host matches it with an engine that has the usual syntax " +
		"but no lookaround or backreferences.", fields: map[string]tsField{
		"kind": {required: true, ts: `"text" | "containsText" | "value" | "visible" | "hidden" | "checked" | "unchecked" | "count" | ` +
			`"attribute" | "class" | "enabled" | "disabled" | "focused" | "editable" | "url" | "title"`},
		"name": {doc: `The attribute of an "attribute" expectation.`},
		"not":  {doc: "Turns the expectation round: it holds once the condition does not."},
	}},
	"TextPattern": {doc: "A RegExp as it crosses to the host.", fields: map[string]tsField{
		"source": {required: true}, "flags": {required: true},
	}},
	"UrlMatch": {doc: "What Tab.waitForURL sends the host: the address as a glob, or a RegExp as its source and flags."},
	"ScreenshotOptions": {doc: "Options of Tab.screenshot.", fields: map[string]tsField{
		"fullPage": {doc: "Capture the whole page rather than the visible part. Default false."},
	}},
	"FormOptions": {doc: "Options of the form actions: fill, check, select, setFiles, dragTo and focus, and the base of the others'.", fields: map[string]tsField{
		"dryRun": {doc: "Resolve and check the target (and its custom parts), log the write the call would make, and change nothing. Default false."},
		"parts": {doc: "CSS selectors for the parts of a custom control, for select on a dropdown that is not a native <select>: " +
			`"trigger" opens it (default: the target itself), "option" matches its options by text, "value" shows the chosen value (default: the target).`,
			ts: "{ trigger?: string; option?: string; value?: string; [part: string]: string | undefined }"},
		"timeout": {doc: "How long to wait for the target, in milliseconds. Default: the host's limit."},
	}},
	"PressOptions": {doc: "Options of Tab.press.", fields: map[string]tsField{
		"target":    {doc: "The element to focus before the key is pressed. Default: whatever has focus.", ts: "Target"},
		"modifiers": {doc: tsModifiers},
	}},
	"HoverOptions": {doc: "Options of Tab.hover: where to point, and the keys held meanwhile.", fields: map[string]tsField{
		"modifiers": {doc: tsModifiers},
		"position":  {doc: "The point to act at, in CSS pixels from the element's top left corner. Default: the centre of its visible part."},
	}},
	"Position": {doc: "A point of an element, in CSS pixels from its top left corner.", fields: map[string]tsField{
		"x": {required: true}, "y": {required: true},
	}},
	"DblclickOptions": {doc: "Options of Tab.dblclick.", fields: map[string]tsField{
		"button": {doc: `The mouse button. Default "left".`, ts: `"left" | "right" | "middle"`},
	}},
	"ClickOptions": {doc: "Options of Tab.click.", fields: map[string]tsField{
		"clickCount": {doc: "How many clicks make the gesture, 1 to 3 (3 selects a paragraph). Default 1."},
	}},
	"TypeOptions": {doc: "Options of Tab.type.", fields: map[string]tsField{
		"delay": {doc: "The pause between key presses, in milliseconds (at most 10000). Default 0."},
	}},
	"Table": {doc: "A table or grid as Tab.table reads it.", fields: map[string]tsField{
		"headers": {doc: "The names of the header row's cells; empty when the table has no row of column headers."},
		"rows":    {doc: "The other rows, each its cells' names in order."},
	}},
	"FieldState": {doc: "A field after fill: what it holds and whether the page accepts it.", fields: map[string]tsField{
		"value":             {doc: "The value the field holds."},
		"invalid":           {doc: "Whether the field fails its validation (:invalid or aria-invalid)."},
		"validationMessage": {doc: `The browser's validation message, or "".`},
		"errorText":         {doc: `Error text the page shows for the field, or "".`},
	}},
	"OpenTabOptions": {doc: "Options of tabs.open.", fields: map[string]tsField{
		"background": {doc: "Open without switching to the tab. Default false."},
		"timeout":    {doc: "How long to wait for a free tab slot and for the page to load, in milliseconds. Default: the host's limit."},
		"seq":        {doc: "The SDK's number for a background open, in the order the script made them; scripts leave it out."},
	}},
	"TabInfo": {doc: "TabInfo is what the host reports about a tab."},
	"DialogAnswer": {doc: "An answer to a dialog in object form: OK (accept true) or Cancel, and a prompt's text.", fields: map[string]tsField{
		"accept": {required: true},
	}},
}
