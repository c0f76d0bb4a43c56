//go:build js && wasm

package main

import (
	"errors"
	"net/url"
	"strings"
	"syscall/js"

	"github.com/tranquil/automation/internal/importtable"
	"github.com/tranquil/automation/internal/ospath"
	"github.com/tranquil/automation/internal/sitematch"
	"github.com/tranquil/automation/permissions"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("parseHeader", fn(parseHeader))
	api.Set("capabilities", fn(capabilities))
	api.Set("siteAllowed", fn(siteAllowed))
	api.Set("importRefusal", fn(importRefusal))
	js.Global().Set("tranquilRules", api)
	select {} // the functions run on calls from JavaScript
}

// fn makes f callable from JavaScript. A panic (a call with arguments of
// the wrong shape) becomes the JavaScript Error the call throws, rather
// than ending the program and with it every later test's rules.
func fn(f func(js.Value, []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer func() {
			if r := recover(); r != nil {
				msg := "the testing kit's rules failed"
				if err, ok := r.(error); ok {
					msg += ": " + err.Error()
				} else if s, ok := r.(string); ok {
					msg += ": " + s
				}
				out = map[string]any{"panic": msg}
			}
		}()
		return f(this, args)
	})
}

// kinds names each kind of header problem as the kit's HeaderError does.
var kinds = []struct {
	err  error
	name string
}{
	{permissions.ErrNoHeader, "no_header"}, {permissions.ErrSyntax, "syntax"},
	{permissions.ErrUnknownKey, "unknown_key"}, {permissions.ErrBadValue, "bad_value"},
	{permissions.ErrBlanketPath, "blanket_path"}, {permissions.ErrReserved, "reserved"},
	{permissions.ErrDuplicate, "duplicate"}, {permissions.ErrTimeout, "timeout"},
}

// parseHeader(src: Uint8Array | string, scriptPath: string) returns the
// header's fields with ok: true, or ok: false and the ParseError's kind,
// message (without its position), line and column.
func parseHeader(_ js.Value, args []js.Value) any {
	var src []byte
	if args[0].Type() == js.TypeString {
		src = []byte(args[0].String())
	} else {
		src = make([]byte, args[0].Get("length").Int())
		js.CopyBytesToGo(src, args[0])
	}
	script := args[1].String()
	// A script in C:\ or on \\server\share reads as on Windows, any other
	// as on Unix, whatever system the kit runs on: a test may name a made-up
	// folder of either kind, and on Windows every real one is the first.
	ospath.UseWindows(len(script) >= 2 && (script[1] == ':' || script[0] == '\\' && script[1] == '\\'))
	h, err := permissions.Parse(src, script)
	if err != nil {
		var pe *permissions.ParseError
		if !errors.As(err, &pe) {
			return map[string]any{"ok": false, "kind": "syntax", "message": err.Error(), "line": 0, "column": 0}
		}
		kind := "syntax"
		for _, k := range kinds {
			if errors.Is(pe.Kind, k.err) {
				kind = k.name
			}
		}
		return map[string]any{"ok": false, "kind": kind, "message": pe.Msg, "line": pe.Line, "column": pe.Column}
	}
	var timeout any // null: @timeout none
	if !h.NoTimeout {
		timeout = h.Timeout.Milliseconds()
	}
	var read, write []string
	for _, p := range h.Read {
		read = append(read, p.Resolved)
	}
	for _, p := range h.Write {
		write = append(write, p.Resolved)
	}
	return map[string]any{
		"ok": true, "none": h.None, "browser": h.Browser, "clipboard": h.Clipboard, "forms": h.Forms, "pageJs": h.PageJS,
		"sites": list(h.Sites), "net": list(h.Net), "import": list(h.Import), "run": list(h.Run), "env": list(h.Env),
		"read": list(read), "write": list(write), "timeoutMs": timeout, "capabilities": caps(h),
	}
}

// capabilities(h: {browser, forms, pageJs, clipboard}) lists the host APIs
// a run with those grants gets, as Header.Capabilities does.
func capabilities(_ js.Value, args []js.Value) any {
	h := args[0]
	return caps(&permissions.Header{
		Browser: h.Get("browser").Truthy(), Forms: h.Get("forms").Truthy(),
		PageJS: h.Get("pageJs").Truthy(), Clipboard: h.Get("clipboard").Truthy(),
	})
}

func caps(h *permissions.Header) []any {
	var out []string
	for _, c := range h.Capabilities() {
		out = append(out, string(c))
	}
	return list(out)
}

// siteAllowed(url: string, sites: string[]) is cdp.SiteAllowed.
func siteAllowed(_ js.Value, args []js.Value) any {
	return sitematch.Allowed(args[0].String(), stringList(args[1]))
}

// importRefusal(spec, imports, cached, registry) is the runner's import
// table: why a run whose import hosts are imports (any makes Hosts true),
// with the SDK's npm: packages cached and its pinned jsr:@std specifiers
// registry (none without a JSR registry), cannot load spec; "" when it can.
// Where the table lets remote code through, deno's --allow-import (the
// hosts themselves) decides in the app; hostRefusal states that here.
func importRefusal(_ js.Value, args []js.Value) any {
	imports := stringList(args[1])
	t := importtable.Table{Hosts: len(imports) > 0, NPM: stringList(args[2])}
	for _, s := range stringList(args[3]) {
		if pin, ok := importtable.ParsePin(s); ok {
			t.Std = append(t.Std, pin)
		}
	}
	spec := args[0].String()
	if why, _ := t.Refusal(spec); why != "" || !t.Hosts {
		return why
	}
	return hostRefusal(spec, imports, t.Std)
}

// hostRefusal says why deno, granted --allow-import for imports, refuses the
// remote module spec: its host is none of them. A jsr: module comes from
// jsr.io; an @std package the app pins loads from the cache.
func hostRefusal(spec string, imports []string, std []importtable.Pin) string {
	var host, port, from string
	scheme, _, _ := strings.Cut(spec, ":")
	switch strings.ToLower(scheme) {
	case "jsr":
		name, _, _ := importtable.ParseSpec(spec)
		for _, p := range std {
			if p.Name == name {
				return ""
			}
		}
		host, from = "jsr.io", " (jsr: modules come from jsr.io)"
	case "http", "https":
		u, err := url.Parse(spec)
		if err != nil {
			return spec + " cannot be loaded: it is not a URL"
		}
		host, port = strings.ToLower(u.Hostname()), u.Port()
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // import= writes an IPv6 address in brackets
		}
		if port == "443" && u.Scheme == "https" || port == "80" && u.Scheme == "http" {
			port = "" // as a URL's port reads, and deno compares
		}
	default:
		return ""
	}
	for _, i := range imports {
		v := strings.ToLower(i)
		if rest, ok := strings.CutPrefix(v, "*."); ok && strings.HasSuffix(host, "."+rest) ||
			v == host || port != "" && v == host+":"+port {
			return ""
		}
	}
	return spec + " cannot be loaded: " + host + from + " is not one of the hosts the run may import from (" + strings.Join(imports, ", ") + ")"
}

func stringList(v js.Value) []string {
	out := make([]string, v.Length())
	for i := range out {
		out[i] = v.Index(i).String()
	}
	return out
}

// list is l as js.ValueOf takes a list.
func list(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
