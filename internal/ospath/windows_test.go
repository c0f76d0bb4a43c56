package ospath

import (
	"path/filepath"
	"runtime"
	"testing"
)

// Cases from Go's own path/filepath tests for Windows; on Windows the
// test holds the copy to filepath itself too.
var (
	winCleanCases = [][2]string{
		{`c:`, `c:.`}, {`c:\`, `c:\`}, {`c:\abc`, `c:\abc`}, {`c:abc\..\..\.\.\..\def`, `c:..\..\def`},
		{`c:\abc\def\..\..`, `c:\`}, {`c:\..\abc`, `c:\abc`}, {`c:..\abc`, `c:..\abc`}, {`\`, `\`}, {`/`, `\`},
		{`\\i\..\c$`, `\\i\..\c$`}, {`\\i\..\i\c$`, `\\i\..\i\c$`}, {`\\i\..\I\c$`, `\\i\..\I\c$`},
		{`\\host\share\foo\..\bar`, `\\host\share\bar`}, {`//host/share/foo/../baz`, `\\host\share\baz`},
		{`\\host\share\foo\..\..\..\..\bar`, `\\host\share\bar`}, {`\\.\C:\a\..\..\..\..\bar`, `\\.\C:\bar`},
		{`\\.\C:\\\\a`, `\\.\C:\a`}, {`\\a\b\..\c`, `\\a\b\c`}, {`\\a\b`, `\\a\b`}, {`.\c:`, `.\c:`},
		{`.\c:\foo`, `.\c:\foo`}, {`.\c:foo`, `.\c:foo`}, {`//abc`, `\\abc`}, {`///abc`, `\\\abc`},
		{`//abc//`, `\\abc\\`}, {`\\?\C:\`, `\\?\C:\`}, {`\\?\C:\a`, `\\?\C:\a`}, {`a/../c:`, `.\c:`},
		{`a\..\c:`, `.\c:`}, {`a/../c:/a`, `.\c:\a`}, {`a/../../c:`, `..\c:`}, {`foo:bar`, `foo:bar`},
		{`/a/../??/a`, `\.\??\a`}, {`C:/Users/x/../y`, `C:\Users\y`},
	}
	winDirCases = [][2]string{
		{`c:\`, `c:\`}, {`c:.`, `c:.`}, {`c:\a\b`, `c:\a`}, {`c:a\b`, `c:a`}, {`c:a\b\c`, `c:a\b`},
		{`\\host\share`, `\\host\share`}, {`\\host\share\`, `\\host\share\`}, {`\\host\share\a`, `\\host\share\`},
		{`\\host\share\a\b`, `\\host\share\a`}, {`\\\\`, `\\\\`}, {`C:\Users\me\s\script.ts`, `C:\Users\me\s`},
	}
	winAbsCases = map[string]bool{
		`C:\`: true, `c\`: false, `c::`: false, `c:`: false, `/`: false, `\`: false, `\Windows`: false, `c:a\b`: false,
		`c:\a\b`: true, `c:/a/b`: true, `\\host\share`: true, `\\host\share\`: true, `\\host\share\foo`: true,
		`//host/share/foo/bar`: true, `\\?\a\b\c`: true, `\??\a\b\c`: true, ``: false, `a`: false,
	}
	winJoinCases = []struct {
		elem []string
		want string
	}{
		{[]string{`directory`, `file`}, `directory\file`}, {[]string{`C:\Windows\`, `System32`}, `C:\Windows\System32`},
		{[]string{`C:\Windows\`, ``}, `C:\Windows`}, {[]string{`C:\`, `Windows`}, `C:\Windows`}, {[]string{`C:`, `a`}, `C:a`},
		{[]string{`C:`, `a\b`}, `C:a\b`}, {[]string{`C:`, `a`, `b`}, `C:a\b`}, {[]string{`C:`, ``, `b`}, `C:b`},
		{[]string{`C:`, `\a`}, `C:\a`}, {[]string{`\\host\share`, `foo`}, `\\host\share\foo`},
		{[]string{`\\host\share\foo`}, `\\host\share\foo`}, {[]string{`//host/share`, `foo/bar`}, `\\host\share\foo\bar`},
		{[]string{`\`}, `\`}, {[]string{`\`, ``}, `\`}, {[]string{`\`, `a`}, `\a`}, {[]string{`\\`, `a`}, `\\a`},
		{[]string{`\`, `a`, `b`}, `\a\b`}, {[]string{`\\`, `a`, `b`}, `\\a\b`}, {[]string{`\`, `\\a\b`, `c`}, `\a\b\c`},
		{[]string{`\\a`, `b`, `c`}, `\\a\b\c`}, {[]string{`\\a\`, `b`, `c`}, `\\a\b\c`}, {[]string{`//`, `a`}, `\\a`},
		{[]string{`a:\b\c`, `x\..\y:\..\..\z`}, `a:\b\z`}, {[]string{`\`, `??\a`}, `\.\??\a`},
	}
)

func TestWindowsPathsAsGoReadsThem(t *testing.T) {
	native := runtime.GOOS == "windows"
	for _, c := range winCleanCases {
		if got := winClean(c[0]); got != c[1] || native && got != filepath.Clean(c[0]) {
			t.Errorf("winClean(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	for _, c := range winDirCases {
		if got := winDir(c[0]); got != c[1] || native && got != filepath.Dir(c[0]) {
			t.Errorf("winDir(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	for p, want := range winAbsCases {
		if got := winIsAbs(p); got != want || native && got != filepath.IsAbs(p) {
			t.Errorf("winIsAbs(%q) = %v, want %v", p, got, want)
		}
	}
	for _, c := range winJoinCases {
		if got := winJoin(c.elem); got != c.want || native && got != filepath.Join(c.elem...) {
			t.Errorf("winJoin(%q) = %q, want %q", c.elem, got, c.want)
		}
	}
}
