package testenv

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestPagesDirAndScript(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.html"), []byte("<p>a"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := NewPages()
	p.Dir("/files", dir)
	p.Dir("/files/", t.TempDir()) // a second registration is ignored
	p.Script("/s.js", "var x = 1;")
	srv := Site(p)
	defer srv.Close()
	for _, c := range []struct{ path, body, ctype string }{
		{"/files/sub/a.html", "<p>a", "text/html; charset=utf-8"},
		{"/s.js", "var x = 1;", "text/javascript; charset=utf-8"},
	} {
		res, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != c.body || res.Header.Get("Content-Type") != c.ctype {
			t.Errorf("%s: %d %q %q", c.path, res.StatusCode, b, res.Header.Get("Content-Type"))
		}
		if res.Header.Get("Content-Security-Policy") != LoopbackCSP {
			t.Errorf("%s: no loopback CSP", c.path)
		}
	}
}
