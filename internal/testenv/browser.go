package testenv

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Pages is the mux of a package's test site: tests register HTML pages by
// path, each once however many tests ask for it.
type Pages struct {
	*http.ServeMux
	seen sync.Map
}

// NewPages returns an empty Pages; serve it with LoopbackOnly.
func NewPages() *Pages { return &Pages{ServeMux: http.NewServeMux()} }

// Once serves h at pattern, registering it on the first call only.
func (p *Pages) Once(pattern string, h http.Handler) {
	if _, loaded := p.seen.LoadOrStore(pattern, true); !loaded {
		p.Handle(pattern, h)
	}
}

// HTML serves html at path, registering it on the first call only.
func (p *Pages) HTML(path, html string) {
	p.Once(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, html)
	}))
}

// BrowserLeaks reports what launched browsers left behind under root,
// the folder their profiles were made in: a profile directory, or a live
// process whose command line names root.
func BrowserLeaks(root string) error {
	entries, _ := os.ReadDir(root)
	if len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return fmt.Errorf("leak: profile directories left in %s: %v", root, names)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.Contains(string(b), root) {
			// Zombies have an empty cmdline, so a match is a live process.
			return fmt.Errorf("leak: browser process still running: %s: %s", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return nil
}

// Site starts a server on 127.0.0.1 that serves h with LoopbackCSP; the
// caller closes it.
func Site(h http.Handler) *httptest.Server {
	return httptest.NewServer(LoopbackOnly(h))
}

// HTMLSite starts a Site serving html at every path.
func HTMLSite(html string) *httptest.Server {
	return Site(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, html)
	}))
}
