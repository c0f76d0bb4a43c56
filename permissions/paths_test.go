package permissions

import "runtime"

// jq is an absolute path of a command, as this system writes one: a
// Windows path without a drive is not absolute.
var jq = map[bool]string{true: `C:\tools\jq.exe`, false: "/usr/bin/jq"}[runtime.GOOS == "windows"]
