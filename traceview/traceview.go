package traceview

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/display"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
)

// Source is what the view shows: the runs, newest first, and one run's
// trace. Trace returns an error wrapping [ErrNotFound] (or
// history.ErrNoRun or history.ErrNoTrace) for a run without one.
type Source interface {
	Runs(ctx context.Context) ([]history.Entry, error)
	Trace(ctx context.Context, id string) (*trace.Trace, error)
}

// ErrNotFound is what a Source's Trace wraps for a run it does not know.
var ErrNotFound = errors.New("traceview: not found")

// FromHistory is a Source over h, decoding the traces it keeps.
func FromHistory(h *history.Store) Source { return historySource{h} }

type historySource struct{ h *history.Store }

func (s historySource) Runs(context.Context) ([]history.Entry, error) { return s.h.List(), nil }

func (s historySource) Entry(_ context.Context, id string) (history.Entry, bool) { return s.h.Get(id) }

// entrySource is a Source that finds one run without listing them all.
type entrySource interface {
	Entry(ctx context.Context, id string) (history.Entry, bool)
}

// entry finds run id's entry, or nil.
func (v *view) entry(ctx context.Context, id string) *history.Entry {
	if es, ok := v.src.(entrySource); ok {
		if e, ok := es.Entry(ctx, id); ok {
			return &e
		}
		return nil
	}
	runs, err := v.src.Runs(ctx)
	if err != nil {
		return nil
	}
	for i := range runs {
		if runs[i].ID == id {
			return &runs[i]
		}
	}
	return nil
}

func (s historySource) Trace(_ context.Context, id string) (*trace.Trace, error) {
	data, err := s.h.Trace(id)
	if err != nil {
		return nil, err
	}
	return trace.Decode(data)
}

// csp allows no script, and styles and images from the view only.
const csp = "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed view.css page.html
var files embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"line": display.Line,
	"text": display.Text,
	"span": span,
	"rel":  offset,
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"path": url.PathEscape,
	"tail": tail,
	"scriptOf": func(e *history.Entry) string {
		if e == nil {
			return ""
		}
		return e.Script
	},
}).ParseFS(files, "page.html"))

// outputTail is how much of a run's output the run page shows: its end,
// where a failure shows.
const outputTail = 8 << 10

func tail(s string) string {
	if len(s) <= outputTail {
		return s
	}
	cut := len(s) - outputTail
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

// Options configures New. The zero value is usable.
type Options struct {
	// Logger receives errors of the Source. Nil means slog.Default().
	Logger *slog.Logger
	// SDKRoot is the folder holding the SDK's builds (a runner's
	// <DataDir>/sdk), whose files the run page folds into the SDK's own
	// accesses. Empty means any path within a folder named sdk-<hash> or
	// current inside one named sdk, the runner's layout.
	SDKRoot string
	// NoSource leaves out the script's line beside each call. False (the
	// default) shows it when the run's script (its history entry's path)
	// can be read: the file a call site names, relative to the script's
	// folder, inside that folder only, as it is now.
	NoSource bool
}

// New returns the view over src.
func New(src Source, o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	v := &view{src: src, log: o.Logger, sdkRoot: o.SDKRoot, noSource: o.NoSource}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", v.list)
	mux.HandleFunc("GET /view.css", v.css)
	mux.HandleFunc("GET /run/{id}", v.run)
	mux.HandleFunc("GET /run/{id}/shot/{n}", v.image(failureImage))
	mux.HandleFunc("GET /run/{id}/action/{n}", v.image(actionImage))
	return guard(mux)
}

type view struct {
	src      Source
	log      *slog.Logger
	sdkRoot  string
	noSource bool
}

// guard sets the headers every answer carries and refuses a request whose
// Host is not loopback: a page that rebinds its name to 127.0.0.1 would
// otherwise read the view as its own origin.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !loopbackHost(r.Host) {
			http.Error(w, "traceview: answers only on a loopback address", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

func (v *view) css(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	b, _ := files.ReadFile("view.css")
	w.Write(b)
}

func (v *view) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		v.log.Warn("traceview: rendering", "page", name, "error", err)
	}
}

func (v *view) fail(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, ErrNotFound) || errors.Is(err, history.ErrNoRun) || errors.Is(err, history.ErrNoTrace) {
		http.Error(w, "traceview: no such trace", http.StatusNotFound)
		return
	}
	v.log.Warn("traceview: "+what, "error", err)
	http.Error(w, "traceview: the trace could not be read", http.StatusInternalServerError)
}

func (v *view) list(w http.ResponseWriter, r *http.Request) {
	runs, err := v.src.Runs(r.Context())
	if err != nil {
		v.fail(w, "listing runs", err)
		return
	}
	v.render(w, "list", newListPage(runs, r.URL.Query().Get("state")))
}

func (v *view) run(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, err := v.src.Trace(r.Context(), id)
	if err != nil {
		v.fail(w, "reading a trace", err)
		return
	}
	e := v.entry(r.Context(), id)
	var src *scripts
	if e != nil && !v.noSource {
		src = openScripts(e.Script)
		defer src.close()
	}
	v.render(w, "run", newRunPage(id, e, t, v.sdkRoot, src))
}

// image serves image n of a trace's list, which pick gives ("" when the
// list holds no n), when it is an image the trace may hold.
func (v *view) image(pick func(t *trace.Trace, n int) (img []byte, typ string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n < 0 {
			http.NotFound(w, r)
			return
		}
		t, err := v.src.Trace(r.Context(), r.PathValue("id"))
		if err != nil {
			v.fail(w, "reading a trace", err)
			return
		}
		img, typ := pick(t, n)
		if img == nil || (typ != trace.JPEG && typ != trace.PNG) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", typ)
		w.Write(img)
	}
}

// failureImage is the screenshot of the trace's failure n.
func failureImage(t *trace.Trace, n int) ([]byte, string) {
	if n >= len(t.Failures) {
		return nil, ""
	}
	return t.Failures[n].Image, t.Failures[n].ImageType
}

// actionImage is screenshot n of the trace's Shots.
func actionImage(t *trace.Trace, n int) ([]byte, string) {
	if n >= len(t.Shots) {
		return nil, ""
	}
	return t.Shots[n].Image, t.Shots[n].ImageType
}
