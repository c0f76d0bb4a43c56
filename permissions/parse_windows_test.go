//go:build windows

package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// TestWindowsPathGrantsRefused: the forms of a Windows path that would
// grant something other than what the prompt shows are refused.
func TestWindowsPathGrantsRefused(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	for in, msg := range map[string]string{
		`\\server\share\x`:               "network path",
		`//server/share/x`:               "network path",
		`\\?\` + dir + `\out.md`:         `device or \\?\ path`,
		`\\.\PhysicalDrive0`:             `device or \\?\ path`,
		filepath.VolumeName(dir) + `out`: "relative to the current folder of drive",
		`\out.md`:                        "has no drive",
		`/out.md`:                        "has no drive",
		`out.md:hidden`:                  "alternate data stream",
		`CON`:                            "Windows device",
		`NUL`:                            "Windows device",
		`COM1`:                           "Windows device",
		`con.txt`:                        "Windows device",
		filepath.Join(dir, "sub", "aux"): "Windows device",
	} {
		for _, key := range []string{"read", "write"} {
			_, err := Parse([]byte("// @permissions "+key+"=\""+strings.ReplaceAll(in, `\`, `\\`)+"\"\n"), script)
			require.ErrorIs(t, err, ErrBadValue, "%s=%s", key, in)
			assert.Contains(t, err.Error(), msg, "%s=%s", key, in)
		}
	}
}

// TestWindowsGrantsIgnoreCase: a path spelled in another case (drive
// letter included) is the same folder to every guard.
func TestWindowsGrantsIgnoreCase(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	for _, v := range []string{strings.ToUpper(dir), strings.ToLower(dir), strings.ToLower(filepath.Dir(dir))} {
		_, err := Parse([]byte("// @permissions write=\""+strings.ReplaceAll(v, `\`, `\\`)+"\"\n"), script)
		require.ErrorIs(t, err, ErrBlanketPath, v)
	}

	// The host's own data, not created yet, reached in another case.
	c := flagConfig(script)
	data := filepath.Join(filepath.Dir(filepath.Dir(dir)), "Data")
	c.Protected = []string{data}
	for _, v := range []string{strings.ToUpper(data) + `\consent.json`, strings.ToLower(data)} {
		h := mustParse(t, script, "// @permissions read=\""+strings.ReplaceAll(v, `\`, `\\`)+"\"\n")
		_, err := Flags(h, c)
		require.ErrorIs(t, err, ErrMachinery, v)
	}
	// And the runtime's own files.
	h := mustParse(t, script, "// @permissions write=\""+strings.ReplaceAll(strings.ToUpper(c.SDKDir), `\`, `\\`)+"\"\n")
	_, err := Flags(h, flagConfig(script))
	require.ErrorIs(t, err, ErrMachinery)
}

// TestWindowsShortNameOfTheScriptFolder: the script's folder written as
// its 8.3 short name is still the script's folder.
func TestWindowsShortNameOfTheScriptFolder(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(root, "Long Script Folder")
	require.NoError(t, os.Mkdir(dir, 0o755))
	script := filepath.Join(dir, "job.ts")
	u, err := windows.UTF16PtrFromString(dir)
	require.NoError(t, err)
	buf := make([]uint16, windows.MAX_PATH)
	n, err := windows.GetShortPathName(u, &buf[0], uint32(len(buf)))
	require.NoError(t, err)
	short := windows.UTF16ToString(buf[:n])
	if strings.EqualFold(short, dir) {
		t.Skip("this volume makes no 8.3 short names")
	}
	_, err = Parse([]byte("// @permissions write=\""+strings.ReplaceAll(short, `\`, `\\`)+"\"\n"), script)
	require.ErrorIs(t, err, ErrBlanketPath, short)
	h := mustParse(t, script, "// @permissions write=\""+strings.ReplaceAll(short, `\`, `\\`)+`\\out.md"`+"\n")
	assert.Equal(t, filepath.Join(dir, "out.md"), h.Write[0].Resolved)
}

// TestWindowsDriveLetterPaths: absolute paths with a drive, either
// separator, are granted as written.
func TestWindowsDriveLetterPaths(t *testing.T) {
	script := scriptDir(t)
	outside := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(script))), "elsewhere")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	h := mustParse(t, script, "// @permissions read=\""+strings.ReplaceAll(outside, `\`, `\\`)+"\",\""+filepath.ToSlash(outside)+"/x.txt\"\n")
	assert.Equal(t, outside, h.Read[0].Resolved)
	assert.Equal(t, Dir, h.Read[0].Kind)
	assert.Equal(t, filepath.Join(outside, "x.txt"), h.Read[1].Resolved)
}

// A relative run= path is refused with an example of an absolute path
// this system takes.
func TestWindowsRunExampleIsAWindowsPath(t *testing.T) {
	_, err := Parse([]byte("// @permissions run=\"bin\\\\git.exe\"\n"), scriptDir(t))
	require.ErrorIs(t, err, ErrBadValue)
	assert.Contains(t, err.Error(), `C:\Program Files\Git\cmd\git.exe`)
}
