package permissions

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWindowsPathProblem checks the Windows-only path rules on every
// system: they read the value as Windows would.
func TestWindowsPathProblem(t *testing.T) {
	for _, ok := range []string{`C:\data`, `c:\DATA\x`, `C:/data/x.txt`, `out.md`, `sub\out.md`, `..\out.md`,
		`console.txt`, `COM10`, `nul2`, `CONx.log`, `LPT`, `\\server\share\x` /* refused as a network path */} {
		assert.Empty(t, windowsPathProblem("write", ok), ok)
	}
	for in, msg := range map[string]string{
		`C:foo`:            "relative to the current folder of drive C:",
		`c:..\x`:           "relative to the current folder of drive c:",
		`C:`:               "relative to the current folder of drive C:",
		`\data\x`:          "has no drive",
		`/data/x`:          "has no drive",
		`\\?\C:\data`:      `device or \\?\ path`,
		`\\.\COM1`:         `device or \\?\ path`,
		`//?/C:/data`:      `device or \\?\ path`,
		`out.txt:hidden`:   "alternate data stream",
		`C:\data\x:$DATA`:  "alternate data stream",
		`CON`:              "Windows device CON",
		`nul`:              "Windows device nul",
		`COM1`:             "Windows device COM1",
		`con.txt`:          "Windows device con.txt",
		`C:\data\LPT9.log`: "Windows device LPT9.log",
		`sub\aux\x.txt`:    "Windows device aux",
		`NUL .txt`:         "Windows device NUL .txt",
		`COM¹`:             "Windows device COM¹",
		`CONOUT$`:          "Windows device CONOUT$",
		`data\prn.tar.gz`:  "Windows device prn.tar.gz",
	} {
		assert.Contains(t, windowsPathProblem("write", in), msg, in)
	}
}
