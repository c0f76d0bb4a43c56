package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/textfold"
)

//go:generate env TRANQUIL_UPDATE_CODES=1 go test -run ^TestSDKErrorCodesAreTheTable$ .

// What the tab facades share: their waits, the errors a script can act
// on, dialog answers and file grants.

// boundWait bounds a call that takes no timeout of its own (attaching a
// tab, url, title, evaluate, screenshot, close, and the calls into the
// host's ui, clipboard, workspace and tabs) by the default wait: a page
// whose code never yields (a dialog storm, a busy loop), or a host that
// does not answer, must not hold a call, and so the script, for ever.
func boundWait(ctx context.Context) (context.Context, context.CancelFunc) {
	return withTimeout(ctx, 0)
}

// withTimeout bounds a browser wait by ms milliseconds, or by a default
// when ms is not positive, so that nothing waits forever.
func withTimeout(ctx context.Context, ms float64) (context.Context, context.CancelFunc) {
	d := defaultTabWait
	if ms > 0 {
		d = time.Duration(ms * float64(time.Millisecond))
	}
	return context.WithTimeout(ctx, d)
}

// hostAnswer is err, the answer of a call into the host's own code (ui,
// clipboard, workspace, tabs) under ctx from boundWait: once the wait has
// passed, whatever the host answered, the script is told that the app did
// not answer in time, with code timeout.
func hostAnswer(ctx context.Context, api string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return codeErr(errcode.Timeout, capnweb.NameError, "%s: the app did not answer in time", api)
	case errors.Is(ctx.Err(), context.Canceled):
		return codeErr(errcode.Cancelled, capnweb.NameError, "%s: the call was cancelled: the run is ending", api)
	}
	return err
}

// codeErr is an error a script can branch on through err.code.
func codeErr(code errcode.Code, name, format string, args ...any) error {
	return capnweb.Errorf(name, map[string]any{"code": string(code)}, format, args...)
}

// browserErr maps a cdp or host error to an error with a code.
func browserErr(err error) error {
	if err == nil {
		return nil
	}
	var ce *capnweb.Error
	if errors.As(err, &ce) {
		return err
	}
	code := errcode.Of(err)
	props := map[string]any{"code": string(code)}
	var nc *cdp.NotCommittedError
	if errors.As(err, &nc) {
		props["kept"] = nc.Kept
	}
	var ee *cdp.EvalError
	if errors.As(err, &ee) {
		props["remoteName"], props["remoteMessage"], props["line"], props["column"] = ee.Name, ee.Message, ee.Line, ee.Column
	}
	return capnweb.Errorf(capnweb.NameError, props, "%s", scriptMessage(err, code))
}

// scrubEndpoints takes DevTools endpoints out of a message for a script: a
// script that learnt one could ask to be granted it, or try it. An
// endpoint is what the regular expression
//
//	(?i)\b(?:wss?|https?)://[^\s"'<>]*/devtools/[^\s"'<>]*
//
// matches: a ws:, wss:, http: or https: URL that starts a word, up to the
// next space, quote or angle bracket, with /devtools/ after its "://". A
// message can quote text of megabytes, which that expression took
// milliseconds to scan: this reads each byte a few times at most.
func scrubEndpoints(msg string) string {
	if !strings.Contains(msg, "://") {
		return msg // most messages: one fast pass
	}
	var b strings.Builder
	from := 0 // what is not yet written
	for start := 0; start < len(msg); {
		if endsURL(msg[start]) {
			start++
			continue
		}
		// A URL never leaves a run of bytes that end none, and takes the
		// rest of the run: one per run, at the first scheme with
		// /devtools/ after it.
		end := start
		for end < len(msg) && !endsURL(msg[end]) {
			end++
		}
		if last := lastDevtoolsPath(msg[start:end]); last >= 0 {
			for i := start; i < start+last; i++ {
				if n := schemeLen(msg[i:end]); n > 0 && i+n <= start+last && wordStartsAt(msg, i) {
					b.WriteString(msg[from:i])
					b.WriteString("<devtools endpoint>")
					from = end
					break
				}
			}
		}
		start = end
	}
	if from == 0 {
		return msg
	}
	b.WriteString(msg[from:])
	return b.String()
}

// endsURL reports whether c is \s, '"', '\”, '<' or '>'.
func endsURL(c byte) bool {
	switch c {
	case '\t', '\n', '\f', '\r', ' ', '"', '\'', '<', '>':
		return true
	}
	return false
}

// lastDevtoolsPath is where the last /devtools/ (of any case) in run
// starts, or -1.
func lastDevtoolsPath(run string) int {
	last := -1
	for i := 0; i < len(run); i++ {
		if run[i] == '/' {
			if _, ok := textfold.HasPrefix(run[i:], "/devtools/"); ok {
				last = i
			}
		}
	}
	return last
}

// schemeLen is the length of the ws://, wss://, http:// or https:// (of
// any case) s starts with, or 0.
func schemeLen(s string) int {
	if len(s) == 0 || s[0]|0x20 != 'w' && s[0]|0x20 != 'h' {
		return 0
	}
	for _, scheme := range [...]string{"wss://", "ws://", "https://", "http://"} {
		if n, ok := textfold.HasPrefix(s, scheme); ok {
			return n
		}
	}
	return 0
}

// dialogPolicy is how a run's tab answers dialogs: one answer for every
// type, or answers by type. The zero value dismisses everything.
type dialogPolicy struct {
	all    *cdp.DialogAnswer
	byType map[string]cdp.DialogAnswer
}

// answerDialog is the tab's cdp.DialogHandler. The cdp layer dismisses
// whatever it answers on a document outside sites=.
func (t *runTab) answerDialog(d cdp.Dialog) cdp.DialogAnswer {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	if a, ok := t.dialogs.byType[d.Type]; ok {
		return a
	}
	if t.dialogs.all != nil {
		return *t.dialogs.all
	}
	return cdp.DialogAnswer{}
}

// dialogPolicyOf reads tab.onDialog's argument.
func dialogPolicyOf(v capnweb.Value) (dialogPolicy, error) {
	// bad refuses the answers; a refusal of capnweb.Decode's, under
	// (".confirm") in them, goes with its fields.
	bad := func(err error, under, format string, args ...any) (dialogPolicy, error) {
		format = "tab.onDialog: " + format + `; pass "accept", "dismiss", {accept, promptText}, or those by type ({confirm: "accept"})`
		var de *capnweb.DecodeError
		if errors.As(err, &de) {
			de.Arg = 1 // the script's first
			return dialogPolicy{}, invalidArg(de, under, format, args...)
		}
		return dialogPolicy{}, codeErr(errcode.Invalid, capnweb.NameTypeError, format, args...)
	}
	if o, ok := v.(*capnweb.Object); ok && o.Len() > 0 {
		if _, isAnswer := o.Get("accept"); !isAnswer {
			var by dialogAnswers
			if err := capnweb.Decode(o, &by); err != nil {
				return bad(err, "", "%s", decodeMessage(err, "the answers by type"))
			}
			p := dialogPolicy{byType: map[string]cdp.DialogAnswer{}}
			for _, x := range by.byType() {
				if x.answer == nil {
					continue
				}
				a, err := dialogAnswerOf(x.answer)
				if err != nil {
					return bad(err, "."+x.typ, "%s: %v", x.typ, err)
				}
				p.byType[x.typ] = a
			}
			return p, nil
		}
	}
	a, err := dialogAnswerOf(v)
	if err != nil {
		return bad(err, "", "%v", err)
	}
	return dialogPolicy{all: &a}, nil
}

// dialogAnswerOf reads one answer.
func dialogAnswerOf(v capnweb.Value) (cdp.DialogAnswer, error) {
	switch x := v.(type) {
	case string:
		switch x {
		case "accept":
			return cdp.DialogAnswer{Accept: true}, nil
		case "dismiss":
			return cdp.DialogAnswer{}, nil
		}
		return cdp.DialogAnswer{}, fmt.Errorf("unknown answer %q", x)
	case *capnweb.Object:
		var a dialogAnswer
		if err := capnweb.Decode(x, &a); err != nil {
			return cdp.DialogAnswer{}, decodeErr{err, "answer"}
		}
		if a.Accept == nil {
			return cdp.DialogAnswer{}, errors.New("an answer object needs accept")
		}
		return cdp.DialogAnswer{Accept: *a.Accept, PromptText: a.PromptText}, nil
	}
	return cdp.DialogAnswer{}, fmt.Errorf("an answer is a string or an object, not %s", capnweb.KindOf(v))
}

// decodeErr is an error of capnweb.Decode, worded with the value called
// root, that keeps the refusal's fields for errors.As.
type decodeErr struct {
	err  error
	root string
}

func (e decodeErr) Error() string { return decodeMessage(e.err, e.root) }
func (e decodeErr) Unwrap() error { return e.err }

// decodeMessage words an error of capnweb.Decode with the value called
// root.
func decodeMessage(err error, root string) string {
	var de *capnweb.DecodeError
	if errors.As(err, &de) {
		return de.Message(root)
	}
	return err.Error()
}

// grantedFile resolves a path a script gave tab.setFiles: relative to the
// script's folder, like its read= grants, with every link followed. It
// returns the real path of a regular file under one of the run's read=
// grants (where the script could read it itself), and refuses the rest:
// not_granted outside them (or inside the host's own data), not_found for
// nothing there, invalid for a folder or a malformed path.
func (r *Run) grantedFile(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.setFiles: %q is not a path", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(filepath.Dir(r.header.ScriptPath), p)
	}
	_, real, err := pathguard.Resolve(abs)
	if err != nil {
		return "", codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.setFiles: cannot resolve %q: %v", p, err)
	}
	if !r.underGrants(r.header.Read, real) {
		return "", notGranted("read", p, "tab.setFiles gives a page only files the script may read: %q is not under its read= grants", p)
	}
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", codeErr(errcode.NotFound, capnweb.NameError, "tab.setFiles: there is no file %q", p)
	case err != nil:
		return "", codeErr(errcode.Invalid, capnweb.NameError, "tab.setFiles: %q: %v", p, err)
	case !fi.Mode().IsRegular():
		return "", codeErr(errcode.Invalid, capnweb.NameTypeError, "tab.setFiles: %q is not a file", p)
	}
	return real, nil
}

// underGrants reports whether the resolved path real is inside one of
// grants and outside the folders the app keeps to itself.
func (r *Run) underGrants(grants []permissions.Path, real string) bool {
	return slices.ContainsFunc(grants, func(g permissions.Path) bool { return pathguard.Contains(g.Resolved, real) }) &&
		!slices.ContainsFunc(r.m.protected, func(d string) bool { return pathguard.Contains(d, real) })
}

// notGranted is the not_granted error of a path the script's key= grants
// do not cover; its permission names the grant the SDK's NotGrantedError
// tells the script to add.
func notGranted(key, path, format string, args ...any) error {
	perm := key + "=" + path
	if strings.ContainsAny(path, " \t\"") {
		perm = key + "=" + strconv.Quote(path)
	}
	return capnweb.Errorf(capnweb.NameError, map[string]any{"code": string(errcode.NotGranted), "permission": perm}, format, args...)
}

// errCodeOf is the code of an error made by codeErr, or of one from cdp.
func errCodeOf(err error) errcode.Code {
	var ce *capnweb.Error
	if errors.As(err, &ce) {
		if c, ok := ce.Props["code"].(string); ok {
			return errcode.Code(c)
		}
	}
	return errcode.Of(err)
}
