package testenv

import (
	"fmt"
	"net/http"
	"strings"
)

// Dir serves the files under dir at prefix (a path ending in "/"), as they
// are on disk, registering it on the first call only.
func (p *Pages) Dir(prefix, dir string) {
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	p.Once(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServer(http.Dir(dir))))
}

// Script serves the JavaScript js at path, registering it on the first
// call only.
func (p *Pages) Script(path, js string) {
	p.Once(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		fmt.Fprint(w, js)
	}))
}
