package cdp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mafredri/cdp/protocol/runtime"
)

// The judge: how Evaluate's result is judged in the page, in the call
// that makes it, and how the places an exception reports are read back
// as the function's own.

// The function Evaluate runs is wrapped so that one call returns its
// result judged (see judgeFn). Once a document's main world has a judge
// (see startJudge), the call runs on it, as its this: the wrapper is then
// a line, which the browser compiles in microseconds, and the judge runs
// as compiled code. Until then, the wrapper carries the judge in its own
// source.
//
// The function's source starts on the wrapper's first line, so only that
// line's columns move (see unwrapped). The function sees what it saw
// alone: it runs inside a function called with no this (an arrow
// function's this is the page's window, as before) and with its
// arguments; only the self-judged wrapper adds a name, __tranquilSettle,
// to its scope.
const (
	judgedHead     = `function () { return this((function () { return (`
	judgedTail     = "\n)(...arguments); })(...arguments)); }\n//# sourceURL=" + evalURL + "\n" // the browser adds a ")" after it
	selfJudgedHead = `function () { return __tranquilSettle((function () { return (`
	selfJudgedTail = "\n)(...arguments); })(...arguments));\n" + judgeFn + "\n}\n//# sourceURL=" + evalURL + "\n"
)

// judgeFn returns what Evaluate's function returned, judged: a primitive
// as it is (NaN, -0 and bigints as the browser spells them), data in an
// array of one, and anything else as {bad} saying where it is no data: a
// DOM node, a window, a function, a symbol, a BigInt, a Date, Map, Set or
// any other built-in object JSON would turn into {} or lose, or an object
// that holds itself. A promise, or any object with a then method, is
// settled first, as the browser would await it. It looks at most 100,000
// objects (a result of that size is read in a few milliseconds; a bigger
// one is taken as it comes), and never calls the page's toJSON.
//
// The walk keeps no path: data, the common case, builds no string per
// value. A refusal collects the keys on its way back up (keys, innermost
// first) and only then puts them into words.
const judgeFn = `function __tranquilSettle(v) {
  if (v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol")) return v;
  if (typeof v === "object" && typeof v.then === "function") return (async () => __tranquilSettle(await v))();
  let budget = 100000;
  const toString = Object.prototype.toString;
  const hint = { Date: "; return date.toISOString()", Map: "; return Object.fromEntries(map)", Set: "; return [...set]" };
  const holding = new Set();
  const keys = [];
  const why = (v) => {
    switch (typeof v) {
      case "function": return " is a function";
      case "symbol": return " is a symbol";
      case "bigint": return " is a BigInt; return String(n)";
      case "object": break;
      default: return "";
    }
    if (v === null || --budget < 0) return "";
    if (holding.has(v)) return " holds itself (a circular object)";
    try {
      if (v.window === v) return " is a window";
      if (typeof v.nodeType === "number" && typeof v.nodeName === "string") {
        return " is a DOM node (" + String(v.nodeName).toLowerCase() + ")";
      }
    } catch (e) {
      return " is a window of another site";
    }
    const array = Array.isArray(v);
    const tag = array ? "Array" : toString.call(v).slice(8, -1);
    if (tag !== "Array" && tag !== "Object") return " is a " + tag + (hint[tag] || "");
    holding.add(v);
    if (array) {
      for (let i = 0; i < v.length; i++) {
        const w = why(v[i]);
        if (w) return keys.push(i), w;
      }
    } else {
      for (const k of Object.keys(v)) {
        const w = why(v[k]);
        if (w) return keys.push(k), w;
      }
    }
    holding.delete(v);
    return "";
  };
  let bad;
  try {
    bad = why(v);
    if (bad) {
      let path = "the result";
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i];
        path += typeof k === "number" ? "[" + k + "]" : /^[A-Za-z_$][\w$]*$/.test(k) ? "." + k : "[" + JSON.stringify(k) + "]";
      }
      bad = path + bad;
    }
  } catch (e) {
    bad = "it could not be read";
  }
  return bad ? { bad } : [v];
}`

// judgeScript makes a document's judge; its name keeps the judge's own
// frames apart from the function's.
const judgeScript = "function () { return " + judgeFn + " }\n//# sourceURL=" + evalURL + "-judge\n"

// judgeGroup holds the judges, which live as long as their documents.
const judgeGroup = "tranquil-evaluate-judge"

// startJudge makes rm's judge in the background, while the call that
// needed it runs; done closes once it has ended. Two calls may both make
// one; the first kept is used.
func (t *Tab) startJudge(ctx context.Context, rm realmRef) (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		a := runtime.NewCallFunctionOnArgs(judgeScript).SetUniqueContextID(rm.uid).SetObjectGroup(judgeGroup)
		r, err := t.callFunctionOn(ctx, rm.s.route, a)
		if err != nil || r.ExceptionDetails != nil || r.Result.ObjectID == nil {
			return // the next call tries again
		}
		t.frames.setJudge(rm.uid, string(*r.Result.ObjectID))
	}()
	return ch
}

// forgetJudge drops judge if it is still the main world's.
func (t *Tab) forgetJudge(judge string) { t.frames.forgetJudge(judge) }

// judgeGone reports the browser's answer to a call on a judge it no
// longer holds, or whose document is gone.
func judgeGone(err error) bool {
	re := protocolError(err)
	return re != nil && (strings.Contains(re.Message, "Could not find object with given id") || contextGone(err))
}

// evalURL names the wrapper's script in the page's stack traces.
const evalURL = "tranquil-evaluate"

// unwrapped is d with a place in the function's first line as it was
// before the wrapper (whose first line is head), as if the function had
// been sent alone. The place
// is in the wrapper's script when a frame of it, which evalURL names, is
// in that script, or when the script did not compile (a syntax error has
// no frames). A thrown exception's line is 0-based; a rejected promise's
// is 1-based.
func unwrapped(d *runtime.ExceptionDetails, head string) *runtime.ExceptionDetails {
	if d.ScriptID == nil {
		return d
	}
	ours := false
	if d.StackTrace == nil {
		ex := d.Exception
		ours = ex != nil && ex.ClassName != nil && *ex.ClassName == "SyntaxError"
	} else {
		for _, f := range d.StackTrace.CallFrames {
			if f.URL == evalURL && f.ScriptID == *d.ScriptID {
				ours = true
				break
			}
		}
	}
	first := 0
	if strings.HasPrefix(d.Text, "Uncaught (in promise)") {
		first = 1
	}
	if !ours || d.LineNumber != first || d.ColumnNumber < len(head) {
		return d
	}
	c := *d
	c.ColumnNumber -= len(head)
	return &c
}

// judged is what the judge returned: a primitive as it is, data in an
// array of one, which is read in place, or {bad} saying why it is no
// data.
func judged(o runtime.RemoteObject) (json.RawMessage, error) {
	v := valueOf(o)
	switch {
	case o.Type != "object" || len(v) == 0:
		return v, nil
	case v[0] == '[' && v[len(v)-1] == ']':
		return v[1 : len(v)-1], nil
	case v[0] == '{':
		var b struct {
			Bad string `json:"bad"`
		}
		if err := json.Unmarshal(v, &b); err != nil || b.Bad == "" {
			return nil, errNotSerializable
		}
		return nil, notSerializable(b.Bad)
	}
	return v, nil // null
}
