package pathguard

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafeName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".pdf" // 304 bytes
	for in, want := range map[string]string{
		"report.csv":         "report.csv",
		"../../x":            "x",
		`..\..\x`:            "x",
		`C:\x`:               "x",
		"C:x":                "C_x",
		"/etc/passwd":        "passwd",
		"..":                 "download",
		".":                  "download",
		"":                   "download",
		"   ":                "download",
		"a/..":               "download",
		".bashrc":            "bashrc",
		"con":                "_con",
		"CON.txt":            "_CON.txt",
		"nul .txt":           "_nul .txt",
		"com1":               "_com1",
		"LPT¹.log":           "_LPT¹.log",
		"console.txt":        "console.txt",
		"COM10":              "COM10",
		"a\x00b\nc\x1b\x7fd": "abcd",
		"a\u202eb":           "ab",
		"x.txt. . ":          "x.txt",
		"a<b>c|d?e*f\"g":     "a_b_c_d_e_f_g",
		"bad\xffutf8":        "bad_utf8",
	} {
		if got := SafeName(in, "download"); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
	got := SafeName(long, "download")
	if len(got) > MaxNameBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, ".pdf") {
		t.Errorf("a 304-byte name became %q (%d bytes)", got, len(got))
	}
	if got := SafeName(strings.Repeat("a", 300), "d"); len(got) != MaxNameBytes {
		t.Errorf("300 bytes with no extension became %d bytes", len(got))
	}
}

// Whatever the text, the name joined to a folder stays in it.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"../../x", `C:\x`, "con", "a\x00b", strings.Repeat("x", 300), "..", `\\?\C:\x`} {
		f.Add(s)
	}
	dir := filepath.Join(string(filepath.Separator)+"grant", "downloads")
	f.Fuzz(func(t *testing.T, s string) {
		n := SafeName(s, "download")
		if n == "" || len(n) > MaxNameBytes || !utf8.ValidString(n) {
			t.Fatalf("SafeName(%q) = %q", s, n)
		}
		if p := filepath.Join(dir, n); filepath.Dir(p) != dir {
			t.Fatalf("SafeName(%q) = %q leaves the folder: %s", s, n, p)
		}
		if SafeName(n, "download") != n {
			t.Fatalf("SafeName(%q) = %q is not stable", s, n)
		}
		if isDeviceName(n) {
			t.Fatalf("SafeName(%q) = %q is a device", s, n)
		}
	})
}
