package cdp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/textcut"
)

// world selects a JavaScript realm of the main frame.
type world int

const (
	mainWorld world = iota // the page's own
	sdkWorld               // the isolated tranquil-sdk world
)

// Evaluate calls the JavaScript function fn (source such as
// "(a, b) => a + b" or "async function (sel) { … }") in the page's main
// world with args, and returns its result as JSON.
//
// Arguments are JSON-encoded and passed by value; they are never spliced
// into code. float NaN and ±Inf travel as their JavaScript values. A
// returned promise is awaited. The result is nil for undefined; NaN,
// ±Infinity, -0 and bigints come back as JSON strings of their JavaScript
// spelling ("NaN", "1n"). A thrown exception or rejected promise is an
// *EvalError. A result that is no data (a DOM node, a window, a function,
// a symbol, an object that refers to itself) has code not_serializable:
// it is judged in the page and read by value in the same call.
//
// If a navigation destroys the document mid-call, the call is made again
// in the new document until ctx ends, so fn should be safe to repeat.
//
// It is a page action: it runs only in a document the tab's sites allow
// (see [TabOptions]), checked again for each document it is retried in, and
// it is logged.
func (t *Tab) Evaluate(ctx context.Context, fn string, args ...any) (json.RawMessage, error) {
	cargs, err := callArgs(args)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	err = t.act(ctx, "evaluate", "", false, func(ctx context.Context) (err error) {
		out, err = t.callIn(ctx, "", mainWorld, fn, cargs, true)
		return err
	})
	return out, err
}

func callArgs(args []any) ([]runtime.CallArgument, error) {
	out := make([]runtime.CallArgument, len(args))
	for i, a := range args {
		var f float64
		isFloat := false
		switch v := a.(type) {
		case float64:
			f, isFloat = v, true
		case float32:
			f, isFloat = float64(v), true
		case json.RawMessage:
			if !json.Valid(v) {
				return nil, codeErr(errcode.Invalid, "argument %d is not valid JSON", i+1)
			}
			out[i].Value = v
			continue
		}
		if isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			s := "NaN"
			if math.IsInf(f, 1) {
				s = "Infinity"
			} else if math.IsInf(f, -1) {
				s = "-Infinity"
			}
			u := runtime.UnserializableValue(s)
			out[i].UnserializableValue = &u
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, codeErr(errcode.Invalid, "argument %d cannot be sent as JSON: %w", i+1, err)
		}
		out[i].Value = b
	}
	return out, nil
}

// call runs fn in a realm of the main frame's current document; see callIn.
func (t *Tab) call(ctx context.Context, w world, fn string, args []runtime.CallArgument) (json.RawMessage, error) {
	return t.callIn(ctx, "", w, fn, args, false)
}

// callIn runs fn in a realm of frame fr's current document ("" is the
// main frame), retrying in the next document when a navigation destroys
// the realm under the call. Each realm is checked against the tab's sites
// before fn runs in it; the call names the realm by its unique id, so it
// cannot land in another document.
//
// byType reads the result as [Tab.Evaluate] returns it: fn runs in a
// wrapper that judges the result in the page and returns it, or why it
// is no data, in the same call (see judgeFn). Otherwise the result comes
// by value as it is.
func (t *Tab) callIn(ctx context.Context, fr string, w world, fn string, args []runtime.CallArgument, byType bool) (json.RawMessage, error) {
	stale := ""
	for {
		rm, err := t.realmIn(ctx, fr, w, stale)
		if err != nil {
			return nil, err
		}
		if err := t.checkRealmIn(ctx, fr, rm.origin); err != nil {
			return nil, err
		}
		a := runtime.NewCallFunctionOnArgs(fn).SetArguments(args).SetAwaitPromise(true).SetReturnByValue(true)
		head := ""
		switch {
		case !byType:
			a.SetUniqueContextID(rm.uid)
		case rm.judge != "":
			// The realm's judge is the call's this. Its id names the
			// realm as the realm's unique id would: it is no use in
			// another, nor in a later document.
			head = judgedHead
			a.FunctionDeclaration = judgedHead + fn + judgedTail
			a.SetObjectID(runtime.RemoteObjectID(rm.judge))
		default:
			head = selfJudgedHead
			a.FunctionDeclaration = selfJudgedHead + fn + selfJudgedTail
			a.SetUniqueContextID(rm.uid)
			if fr == "" && w == mainWorld {
				done := t.startJudge(ctx, rm)
				defer func() { <-done }()
			}
		}
		group := ""
		if byType {
			// What a call throws is an object the browser holds, in a
			// group of the call's own, so that one call freeing it never
			// frees another's before it has read it.
			group = "tranquil-evaluate-" + strconv.FormatUint(t.evalGroups.Add(1), 10)
			a.SetObjectGroup(group)
		}
		r, err := t.callFunctionOn(ctx, rm.s.route, a)
		if err != nil {
			if rm.judge != "" && judgeGone(err) {
				// The judge went with its document (the next call finds
				// the realm gone), or was freed: the call is made again
				// without it.
				t.forgetJudge(rm.judge)
				if !contextGone(err) {
					continue
				}
			}
			if contextGone(err) {
				stale = rm.uid
				continue
			}
			if ctx.Err() != nil {
				return nil, &WaitTimeoutError{What: "the page's function to return", Err: ctx.Err()}
			}
			if re := protocolError(err); byType && re != nil && !sessionGone(re) {
				// The browser refused to send the value (nested too
				// deep, or a proxy that threw while it was read).
				return nil, errNotSerializable
			}
			return nil, t.fail(err)
		}
		if r.ExceptionDetails != nil {
			if byType {
				t.releaseGroup(rm.s.route, group)
				return nil, evalErrorOf(unwrapped(r.ExceptionDetails, head))
			}
			return nil, evalErrorOf(r.ExceptionDetails)
		}
		if !byType {
			return valueOf(r.Result), nil
		}
		return judged(r.Result)
	}
}

// errNotSerializable is a result that cannot come back as JSON.
var errNotSerializable = notSerializable("")

// notSerializable is the error of a result that cannot come back as JSON;
// why says which part of it, when known.
func notSerializable(why string) error {
	if why != "" {
		why = ": " + why
	}
	return codeErr(errcode.NotSerializable,
		"the function's result cannot come back as JSON%s: return plain data (strings, numbers, booleans, null, arrays and plain objects), such as el.textContent", why)
}

// releaseGroup frees the objects an evaluation returned by reference (its
// result, what it threw) once they are read. Nothing waits for the reply:
// the session runs its requests in order, so the objects are gone before
// anything sent later runs, and a failure leaves nothing to do (a gone
// document took its objects with it).
func (t *Tab) releaseGroup(rt *route, group string) {
	params, err := json.Marshal(runtime.NewReleaseObjectGroupArgs(group))
	if err == nil {
		_ = t.b.m.send(rt, "Runtime.releaseObjectGroup", params)
	}
}

// callFunctionOn is Runtime.callFunctionOn on the connection's direct path:
// it is the call every evaluation, wait and form action makes, so it skips
// rpcc's extra goroutine hops and second decode.
func (t *Tab) callFunctionOn(ctx context.Context, rt *route, a *runtime.CallFunctionOnArgs) (*runtime.CallFunctionOnReply, error) {
	params, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("cdp: encode call: %w", err)
	}
	data, err := t.b.m.invoke(ctx, rt, "Runtime.callFunctionOn", params, t.replyLimit())
	if err != nil {
		var o *oversizeError
		if errors.As(err, &o) && o.metered {
			return nil, t.overBudget(o)
		}
		return nil, err
	}
	give, err := t.takeReply(len(data))
	if err != nil {
		return nil, err
	}
	defer give()
	if o, ok := fastResult(data); ok {
		return &runtime.CallFunctionOnReply{Result: o}, nil
	}
	var resp struct {
		Result *runtime.CallFunctionOnReply `json:"result"`
		Error  *rpcc.ResponseError          `json:"error"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("cdp: decode reply: %w", err)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	if resp.Result == nil {
		return nil, fmt.Errorf("cdp: reply without result")
	}
	return resp.Result, nil
}

// realmRef is one JavaScript realm of a frame's document.
type realmRef struct {
	uid    string   // its unique id
	origin string   // its origin, as the browser reports it
	id     int      // its numeric id, which DOM.resolveNode takes (sdk world only)
	judge  string   // the object id of its judge (main world only; see startJudge), or ""
	s      *session // the session it is reached on
}

// realms are one frame's two realms as the browser last reported them:
// the page's main world and the form runtime's isolated world ("" when
// there is none). The tab's mu guards them.
type realms struct {
	mainCtx     string // uniqueId of the main world
	mainOrigin  string // its origin, as the browser reports it
	worldCtx    string // uniqueId of the tranquil-sdk world
	worldOrigin string // its origin
	worldID     int    // numeric id of worldCtx, which DOM.resolveNode takes
	judge       string // object id of the main world's judge (see startJudge), or ""
}

// created records a realm the browser made (Runtime.executionContextCreated),
// if it is one of the two.
func (r *realms) created(isDefault bool, typ, name, uid, origin string, id int) {
	switch {
	case isDefault:
		r.mainCtx, r.mainOrigin, r.judge = uid, origin, ""
	case typ == "isolated" && name == worldName:
		r.worldCtx, r.worldOrigin, r.worldID = uid, origin, id
	}
}

// destroyed forgets the realm uid, if it is one of the two.
func (r *realms) destroyed(uid string) {
	if r.mainCtx == uid {
		r.mainCtx, r.judge = "", ""
	}
	if r.worldCtx == uid {
		r.worldCtx = ""
	}
}

// clear forgets both, as a new document replaces them.
func (r *realms) clear() { r.mainCtx, r.worldCtx, r.judge = "", "", "" }

// ref is realm w, reached on session s.
func (r *realms) ref(w world, s *session) realmRef {
	if w == sdkWorld {
		return realmRef{uid: r.worldCtx, origin: r.worldOrigin, id: r.worldID, s: s}
	}
	return realmRef{uid: r.mainCtx, origin: r.mainOrigin, judge: r.judge, s: s}
}

// realmIn returns frame fr's realm w, waiting for one that is not stale.
// A stale id is retried after a short while even without news, because
// the error that marked it stale may have been transient. A frame that
// goes away while it waits is a stale ref.
func (t *Tab) realmIn(ctx context.Context, fr string, w world, stale string) (realmRef, error) {
	var retry <-chan time.Time
	if stale != "" {
		tm := time.NewTimer(250 * time.Millisecond)
		defer tm.Stop()
		retry = tm.C
	}
	asked := false
	for {
		rm, main, ok, ch := t.frames.realm(fr, w)
		frame := fr
		if fr == "" {
			frame = t.mainFrame()
		}
		if !ok {
			return realmRef{}, &LocatorError{Code: errcode.StaleRef, Message: "the frame is gone (the page removed or navigated it); resolve the target again"}
		}
		if rm.uid != "" && rm.uid != stale {
			return rm, nil
		}
		if w == sdkWorld && rm.uid == "" && main != "" && !asked {
			// The document has a main world but no SDK world (it was made
			// before attach, or the world was lost): ask for one.
			asked = true
			t.tasks.Go("isolated world", func(context.Context) { _ = t.isolatedWorldOn(ctx, rm.s, frame) })
		}
		select {
		case <-ch:
		case <-retry:
			if rm.uid != "" {
				return rm, nil
			}
		case <-ctx.Done():
			return realmRef{}, &WaitTimeoutError{What: "the page's document", Err: ctx.Err()}
		case <-t.route.gone:
			return realmRef{}, t.route.err
		}
	}
}

func valueOf(o runtime.RemoteObject) json.RawMessage {
	if o.UnserializableValue != nil {
		b, _ := json.Marshal(string(*o.UnserializableValue))
		return b
	}
	if o.Type == "undefined" || len(o.Value) == 0 {
		return nil
	}
	return o.Value
}

// Bounds of an *EvalError's texts: the page chooses them, and a message
// of megabytes, quoted in the error a script gets, in the trace and in
// the log, would cost the host that much several times over.
const (
	maxEvalName    = 200
	maxEvalMessage = 8 << 10
	maxEvalStack   = 16 << 10
)

// evalErrorOf builds an *EvalError from exception details, its texts cut
// to their bounds.
func evalErrorOf(d *runtime.ExceptionDetails) *EvalError {
	e := evalErrorWhole(d)
	e.Name = textcut.Cut(e.Name, maxEvalName)
	e.Message = textcut.Cut(e.Message, maxEvalMessage)
	e.Stack = textcut.Cut(e.Stack, maxEvalStack)
	return e
}

// evalErrorWhole builds an *EvalError from exception details. It does not
// use ExceptionDetails.Error, which panics when no exception object is
// present.
func evalErrorWhole(d *runtime.ExceptionDetails) *EvalError {
	e := &EvalError{Line: d.LineNumber + 1, Column: d.ColumnNumber + 1}
	ex := d.Exception
	switch {
	case ex != nil && ex.Subtype != nil && *ex.Subtype == "error":
		if ex.ClassName != nil {
			e.Name = *ex.ClassName
		}
		desc := ""
		if ex.Description != nil {
			desc = *ex.Description
		}
		e.Stack = desc
		head := desc
		if i := strings.Index(head, "\n    at "); i >= 0 {
			head = head[:i]
		}
		// The description starts with the name the error prints with, which
		// may differ from its class (a custom .name).
		if i := strings.Index(head, ": "); i >= 0 && !strings.Contains(head[:i], " ") {
			e.Name = head[:i]
			head = head[i+2:]
		} else if head == e.Name {
			head = ""
		}
		e.Message = head
	case ex != nil && ex.UnserializableValue != nil:
		e.Message = string(*ex.UnserializableValue)
	case ex != nil && len(ex.Value) > 0:
		e.Message = string(ex.Value)
	case ex != nil && ex.Description != nil:
		e.Message = *ex.Description
	case ex != nil && ex.Type == "undefined":
		e.Message = "undefined"
	default:
		// Uncaught exceptions reported as events may carry only text, such
		// as "Uncaught TypeError: late".
		head := strings.TrimPrefix(d.Text, "Uncaught ")
		if i := strings.Index(head, ": "); i > 0 && isIdent(head[:i]) {
			e.Name, head = head[:i], head[i+2:]
		}
		e.Message = head
	}
	if e.Stack == "" && d.StackTrace != nil {
		var b strings.Builder
		for _, f := range d.StackTrace.CallFrames {
			fmt.Fprintf(&b, "    at %s (%s:%d:%d)\n", cmp.Or(f.FunctionName, "<anonymous>"), f.URL, f.LineNumber+1, f.ColumnNumber+1)
		}
		e.Stack = strings.TrimSuffix(b.String(), "\n")
	}
	return e
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '$' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return s != ""
}

// Condition is something [Tab.WaitFor] waits for.
type Condition struct {
	what  string
	unmet string // what a check that did not hold saw, for the timeout
	world world
	fn    string
	args  []any
}

// Selector holds once an element matches the CSS selector. It is checked in
// the isolated world, so page scripts cannot interfere.
func Selector(css string) Condition {
	return Condition{
		what: fmt.Sprintf("selector %q", css), unmet: "no element matches it", world: sdkWorld,
		fn: "(s) => document.querySelector(s) !== null", args: []any{css},
	}
}

// Predicate holds once the function fn, called in the page's main world
// with args (by value), returns a truthy value or a promise of one.
func Predicate(fn string, args ...any) Condition {
	// fn is code the caller chose to run; the wrapper only awaits it and
	// reduces the result to a boolean, so large results never cross.
	return Condition{
		what: "predicate", unmet: "the function returned a false value", world: mainWorld, args: args,
		fn: "async function (...a) { return !!(await (\n" + fn + "\n)(...a)); }",
	}
}

// waitBackoff are the pauses between checks: quick at first, then easing
// off so a long wait costs little.
var waitBackoff = []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}

// WaitFor polls cond until it holds or ctx ends; then it fails with a
// *WaitTimeoutError. Navigations while waiting are survived: every check
// runs in the current document. An exception thrown by a predicate, or an
// invalid selector, ends the wait at once with an *EvalError.
//
// It is a page action, checked and logged like [Tab.Evaluate].
func (t *Tab) WaitFor(ctx context.Context, cond Condition) error {
	if cond.fn == "" {
		return codeErr(errcode.Invalid, "the wait has no condition")
	}
	cargs, err := callArgs(cond.args)
	if err != nil {
		return err
	}
	return t.act(ctx, "waitFor", cond.what, false, func(ctx context.Context) error {
		return t.waitFor(ctx, cond, cargs)
	})
}

// Holds checks cond once, in the current document, where [Tab.WaitFor]
// waits for it: it reports whether cond holds now. An exception thrown by a
// predicate, or an invalid selector, is an *EvalError.
//
// It is a page action, checked like [Tab.Evaluate] and logged as "holds".
func (t *Tab) Holds(ctx context.Context, cond Condition) (bool, error) {
	if cond.fn == "" {
		return false, codeErr(errcode.Invalid, "the check has no condition")
	}
	cargs, err := callArgs(cond.args)
	if err != nil {
		return false, err
	}
	var ok bool
	err = t.act(ctx, "holds", cond.what, false, func(ctx context.Context) error {
		v, err := t.call(ctx, cond.world, cond.fn, cargs)
		ok = string(v) == "true"
		return err
	})
	return ok, err
}

func (t *Tab) waitFor(ctx context.Context, cond Condition, cargs []runtime.CallArgument) error {
	start := time.Now()
	seen := ""
	timedOut := func() error {
		return &WaitTimeoutError{What: cond.what, Err: ctx.Err(), Waited: waitedSince(ctx, start), Seen: seen}
	}
	for i := 0; ; i++ {
		v, err := t.call(ctx, cond.world, cond.fn, cargs)
		if err != nil {
			if ctx.Err() != nil {
				return timedOut()
			}
			return err
		}
		if string(v) == "true" {
			return nil
		}
		seen = cond.unmet
		if err := t.pause(ctx, waitBackoff, i); err != nil {
			if ctx.Err() != nil {
				return timedOut()
			}
			return err
		}
	}
}
